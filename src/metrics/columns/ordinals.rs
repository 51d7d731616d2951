//! `attempts_by_ordinal.csv`: outcomes by attempt ordinal (see [`crate::metrics::ordinal`]).

use super::*;

/// `layer` of `attempts_by_ordinal.csv`.
pub(crate) const ORDINAL_LAYER: Column = id(
    "layer",
    "depth",
    "layer depth, 0 = the outermost (the i of attempts_layer_<i>)",
);
/// `ordinal`.
pub(crate) const ORDINAL: Column = id(
    "ordinal",
    "attempt number",
    "which attempt of a layer call: 1 = its first, 2 = its first retry, ...; each is a call one level down (or at the dependency below the innermost layer); 1000 counts the 1000th and every later attempt (the last row, and above)",
);
/// `outcome`.
pub(crate) const ORDINAL_OUTCOME: Column = id(
    "outcome",
    "outcome name",
    "how the attempt ended as its layer call saw it: an outcome class (the answer from below, its timer, or a refusal before it left: breaker_open, budget_exhausted for a retry denied by the budget or an attempt refused by a limiter, deadline_exceeded for one the deadline or total_timeout left no time to send), cancelled (the call above cancelled the call, or a hedged copy lost: still out when its call was decided), or in_flight (still out when the run ended)",
);
/// `count`.
pub(crate) const ORDINAL_COUNT: Column = count(
    "count",
    "attempts of this layer and ordinal that ended so (only rows above 0)",
);

/// Columns of `attempts_by_ordinal.csv`, one row per run, layer, ordinal and outcome.
pub(crate) const ATTEMPTS_BY_ORDINAL: [Column; 5] =
    [RUN, ORDINAL_LAYER, ORDINAL, ORDINAL_OUTCOME, ORDINAL_COUNT];

/// Header of `attempts_by_ordinal.csv`.
pub(crate) const ATTEMPTS_BY_ORDINAL_COLUMNS: [&str; 5] = names(&ATTEMPTS_BY_ORDINAL);
