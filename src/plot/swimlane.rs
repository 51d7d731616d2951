//! `swimlane`: the sampled requests of `traces.csv` around the first outage, one lane
//! per request in arrival order, so the herd and the retry waves show request by
//! request.
//!
//! The window runs from [`BEFORE`] seconds before the first outage's start to
//! [`AFTER`] seconds after its end (within the run), or over the whole run when there
//! is no outage. Each lane is a request whose lifetime (its root call's send to its
//! end) meets the window; at most [`MAX_LANES`] lanes, evenly spread over those when
//! more do. In a lane: a light line for the request's lifetime; a bar per attempt the
//! fleet's innermost layer sent (a leaf attempt of the fleet's stack: what reached the
//! first service), from its send to when its caller learned its outcome, coloured by
//! that outcome; a dark tail from there to when the service was done with it, when
//! later (an orphan its caller gave up on); triangles where a retry budget, a rate
//! limiter or a breaker refused a call.
//!
//! The outage windows are `trace.json`'s (its events of category
//! [`OUTAGE_CATEGORY`]: exact, whatever their timing, random ones included); a folder
//! without `trace.json` takes the buckets `timeseries.csv` marks as in an outage.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::export::trace::OUTAGE_CATEGORY;
use crate::metrics::columns::{
    TRACE_ARRIVE, TRACE_BREAKER, TRACE_BUDGET, TRACE_CALLER, TRACE_DONE, TRACE_END, TRACE_FLEET,
    TRACE_KIND, TRACE_OUTCOME, TRACE_PARENT, TRACE_REQUEST, TRACE_SEND, TRACE_SPAN,
};

use super::canvas::{axis_font, frame, tick, tick_font, Chart, DrawResult, Entry, Swatch};
use super::decimate::merge_spans;
use super::palette;
use super::table::CsvStream;
use super::PlotError;

/// Most lanes drawn: more would be thinner than a pixel or two.
pub(crate) const MAX_LANES: usize = 200;
/// Seconds shown before the first outage's start.
pub(crate) const BEFORE: f64 = 2.0;
/// Seconds shown after the first outage's end.
pub(crate) const AFTER: f64 = 10.0;

/// The request's lifetime line.
const LIFETIME: RGBColor = RGBColor(205, 205, 205);
/// An orphan's tail: the service still working after its caller gave up.
const ORPHAN: RGBColor = RGBColor(70, 70, 70);

/// One attempt bar of a lane, seconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bar {
    /// Sent.
    pub send: f64,
    /// Its caller learned its outcome (`None`: never, within the run).
    pub end: Option<f64>,
    /// The service was done with it (`None`: never, within the run).
    pub done: Option<f64>,
    /// Its outcome (`traces.csv`'s `outcome`; empty when none).
    pub outcome: String,
}

/// A refusal in a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A retry budget or a rate limiter refused the attempt.
    Budget,
    /// A circuit breaker rejected the call.
    Breaker,
}

/// One traced request as the swimlane draws it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lane {
    /// Its ordinal among the run's requests.
    pub ordinal: u64,
    /// When it started, seconds.
    pub start: f64,
    /// When it ended (`None`: still going when the run ended).
    pub stop: Option<f64>,
    /// Its fleet's innermost attempts.
    pub bars: Vec<Bar>,
    /// Its refusals, with their time.
    pub refusals: Vec<(f64, Refusal)>,
}

/// The lanes of `traces.csv`, by request ordinal.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Traces {
    /// One per traced request.
    pub lanes: Vec<Lane>,
    /// The latest time the file names, seconds.
    pub latest: f64,
}

/// A row of `traces.csv`, as far as the swimlane reads it.
struct Row {
    request: u64,
    span: u64,
    parent: Option<u64>,
    attempt: bool,
    fleet_side: bool,
    send: f64,
    arrive: Option<f64>,
    end: Option<f64>,
    done: Option<f64>,
    outcome: String,
    budget_refused: bool,
    breaker_rejected: bool,
}

/// Reads `traces.csv` at `path` into lanes; a malformed file is an error naming it,
/// its line and its column.
pub(crate) fn read_traces(path: &Path) -> Result<Traces, PlotError> {
    let mut csv = CsvStream::open(path)?;
    let [request, span, parent, kind, fleet, caller, send, arrive, end, done, outcome, budget, breaker] =
        [
            TRACE_REQUEST,
            TRACE_SPAN,
            TRACE_PARENT,
            TRACE_KIND,
            TRACE_FLEET,
            TRACE_CALLER,
            TRACE_SEND,
            TRACE_ARRIVE,
            TRACE_END,
            TRACE_DONE,
            TRACE_OUTCOME,
            TRACE_BUDGET,
            TRACE_BREAKER,
        ]
        .map(|c| csv.index(c.name));
    let (request, span, parent, kind, fleet, caller) =
        (request?, span?, parent?, kind?, fleet?, caller?);
    let (send, arrive, end, done, outcome, budget, breaker) =
        (send?, arrive?, end?, done?, outcome?, budget?, breaker?);
    let mut rows = Vec::new();
    while let Some(line) = csv.next()? {
        let Some(t_send) = csv.number(send, line)? else {
            return Err(PlotError::BadValue {
                path: path.to_path_buf(),
                line,
                column: TRACE_SEND.name.into(),
                expected: "a number",
                found: String::new(),
            });
        };
        let parent = match csv.text(parent) {
            "" => None,
            _ => Some(csv.integer(parent, line)?),
        };
        let kind = csv.text(kind);
        rows.push(Row {
            request: csv.integer(request, line)?,
            span: csv.integer(span, line)?,
            parent,
            attempt: kind == "attempt" || kind == "hedge",
            fleet_side: csv.text(fleet) == csv.text(caller),
            send: t_send,
            arrive: csv.number(arrive, line)?,
            end: csv.number(end, line)?,
            done: csv.number(done, line)?,
            outcome: csv.text(outcome).to_string(),
            budget_refused: matches!(csv.text(budget), "refused" | "limiter_refused"),
            breaker_rejected: csv.text(breaker).contains("rejected"),
        });
    }
    Ok(lanes_of(rows))
}

/// The lanes of the rows of `traces.csv`.
fn lanes_of(rows: Vec<Row>) -> Traces {
    // Spans that made an attempt: an attempt of theirs is not a leaf.
    let callers: BTreeSet<(u64, u64)> = rows
        .iter()
        .filter(|r| r.attempt)
        .filter_map(|r| r.parent.map(|p| (r.request, p)))
        .collect();
    let mut latest = 0.0f64;
    let mut by_request: BTreeMap<u64, Lane> = BTreeMap::new();
    // Whether the request's root row was seen (its span sets the lifetime).
    let mut rooted: BTreeSet<u64> = BTreeSet::new();
    for r in rows {
        for t in [Some(r.send), r.arrive, r.end, r.done]
            .into_iter()
            .flatten()
        {
            latest = latest.max(t);
        }
        let lane = by_request.entry(r.request).or_insert_with(|| Lane {
            ordinal: r.request,
            start: r.send,
            stop: r.end,
            bars: Vec::new(),
            refusals: Vec::new(),
        });
        if r.parent.is_none() {
            rooted.insert(r.request);
            lane.start = r.send;
            lane.stop = r.end;
        } else if !rooted.contains(&r.request) {
            lane.start = lane.start.min(r.send);
            lane.stop = match (lane.stop, r.end) {
                (Some(a), Some(b)) => Some(a.max(b)),
                _ => None,
            };
        }
        if !r.fleet_side {
            continue;
        }
        let refused = r.budget_refused || (r.breaker_rejected && r.arrive.is_none());
        if r.budget_refused {
            lane.refusals.push((r.send, Refusal::Budget));
        }
        if r.breaker_rejected {
            lane.refusals.push((r.send, Refusal::Breaker));
        }
        if r.attempt && !refused && !callers.contains(&(r.request, r.span)) {
            lane.bars.push(Bar {
                send: r.send,
                end: r.end,
                done: r.done,
                outcome: r.outcome,
            });
        }
    }
    Traces {
        lanes: by_request.into_values().collect(),
        latest,
    }
}

/// The events of `trace.json` the swimlane reads.
#[derive(serde::Deserialize)]
struct TraceFile {
    #[serde(rename = "traceEvents")]
    events: Vec<TraceEvent>,
}

/// One event, as far as an outage window goes (other fields are skipped).
#[derive(serde::Deserialize)]
struct TraceEvent {
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    ph: String,
    #[serde(default)]
    ts: f64,
    #[serde(default)]
    dur: f64,
}

/// The outage windows `[start, end)` in seconds of the `trace.json` at `path`, by
/// start.
pub(crate) fn read_outages(path: &Path) -> Result<Vec<(f64, f64)>, PlotError> {
    let cap = crate::export::read::MAX_TABLE_BYTES;
    let bytes = crate::export::read::read(path, cap).map_err(|source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let file: TraceFile = serde_json::from_slice(&bytes).map_err(|e| PlotError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut out: Vec<(f64, f64)> = file
        .events
        .iter()
        .filter(|e| e.ph == "X" && e.cat.as_deref() == Some(OUTAGE_CATEGORY))
        .map(|e| (e.ts / 1e6, (e.ts + e.dur.max(0.0)) / 1e6))
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    Ok(out)
}

/// The swimlane of a run's traces.
#[derive(Debug)]
pub(crate) struct SwimlaneChart<'a> {
    /// The lanes drawn, top to bottom.
    lanes: Vec<&'a Lane>,
    /// Requests whose lifetime meets the window (the lanes are a sample of them).
    meeting: usize,
    /// The window, seconds.
    window: (f64, f64),
    /// Whether the window is around an outage (else the whole run).
    around_outage: bool,
    /// Outage windows, seconds.
    outages: Vec<(f64, f64)>,
    /// Scenario name (for the title).
    scenario: &'a str,
}

impl<'a> SwimlaneChart<'a> {
    /// The chart of `traces` in a run that ends at `end` seconds with `outages`;
    /// `None` when no traced request meets the window.
    pub(crate) fn new(
        traces: &'a Traces,
        outages: Vec<(f64, f64)>,
        end: f64,
        scenario: &'a str,
    ) -> Option<SwimlaneChart<'a>> {
        let end = end.max(traces.latest);
        let first = outages
            .iter()
            .copied()
            .filter(|(a, b)| a < b && *a < end)
            .min_by(|x, y| x.0.total_cmp(&y.0));
        let (lo, hi) = match first {
            Some((a, b)) => ((a - BEFORE).max(0.0), (b + AFTER).min(end)),
            None => (0.0, end),
        };
        let hi = if hi > lo { hi } else { lo + 1.0 };
        let all: Vec<&Lane> = traces
            .lanes
            .iter()
            .filter(|l| l.start <= hi && l.stop.is_none_or(|s| s >= lo))
            .collect();
        if all.is_empty() {
            return None;
        }
        let lanes = if all.len() > MAX_LANES {
            (0..MAX_LANES)
                .map(|j| all[j * all.len() / MAX_LANES])
                .collect()
        } else {
            all.clone()
        };
        Some(SwimlaneChart {
            lanes,
            meeting: all.len(),
            window: (lo, hi),
            around_outage: first.is_some(),
            outages,
            scenario,
        })
    }

    /// What to read in the chart, for the report.
    pub(crate) fn caption(&self) -> String {
        let shown = if self.lanes.len() < self.meeting {
            format!(
                "{} of the {} sampled requests alive in the window (at most {MAX_LANES}, evenly spread)",
                self.lanes.len(),
                self.meeting
            )
        } else {
            format!(
                "the {} sampled requests alive in the window",
                self.lanes.len()
            )
        };
        let window = if self.around_outage {
            format!("from {BEFORE} s before the first outage to {AFTER} s after it")
        } else {
            "over the whole run".to_string()
        };
        format!(
            "One lane per request, in arrival order ({shown}), {window}: each bar is an attempt the fleet sent to the first service, from its send to when its caller learned the outcome, coloured by that outcome; a dark tail, the service still working on an attempt its caller had given up on; triangles, calls a retry budget, a rate limiter or a breaker refused. Lanes of bars that line up across requests are the herd; repeated bars in one lane are its retries."
        )
    }

    fn legend(&self) -> Vec<Entry> {
        let (lo, hi) = self.window;
        let seen: BTreeSet<&str> = self
            .lanes
            .iter()
            .flat_map(|l| &l.bars)
            .map(|b| outcome_name(&b.outcome))
            .collect();
        let mut l: Vec<Entry> = palette::OUTCOMES
            .iter()
            .filter(|(n, _)| seen.contains(n))
            .map(|(n, c)| {
                Entry::new(
                    format!("attempt: {}", n.replace('_', " ")),
                    Swatch::Band(*c, 1.0),
                )
            })
            .collect();
        l.push(Entry::new("request lifetime", Swatch::Line(LIFETIME)));
        let orphans = self.lanes.iter().flat_map(|l| &l.bars).any(|b| {
            b.done
                .is_some_and(|d| b.end.is_some_and(|e| d > e) && d > lo && b.send < hi)
        });
        if orphans {
            l.push(Entry::new(
                "served after its caller gave up",
                Swatch::Line(ORPHAN),
            ));
        }
        for (kind, label, colour) in [
            (
                Refusal::Budget,
                "refused by budget or limiter",
                palette::BUDGET,
            ),
            (Refusal::Breaker, "rejected by a breaker", palette::BREAKER),
        ] {
            if self
                .lanes
                .iter()
                .flat_map(|l| &l.refusals)
                .any(|(t, k)| *k == kind && (lo..=hi).contains(t))
            {
                l.push(Entry::new(label, Swatch::Mark(colour)));
            }
        }
        if self.outages.iter().any(|(a, b)| *b > lo && *a < hi) {
            l.push(Entry::new("outage", Swatch::Band(palette::OUTAGE, 0.15)));
        }
        l
    }
}

/// An outcome's name as the palette knows it (empty: in flight).
fn outcome_name(o: &str) -> &str {
    if o.is_empty() {
        "in_flight"
    } else {
        o
    }
}

impl Chart for SwimlaneChart<'_> {
    fn name(&self) -> String {
        "swimlane".into()
    }

    fn title(&self) -> String {
        let when = if self.around_outage {
            "around the first outage"
        } else {
            "over the run"
        };
        format!("Sampled requests {when}: {}", self.scenario)
    }

    fn size(&self) -> (u32, u32) {
        (1000, (160 + 4 * self.lanes.len() as u32).clamp(600, 1100))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let area = frame(root, &self.title(), &self.legend())?;
        let (lo, hi) = self.window;
        let n = self.lanes.len();
        // Lane j (from the top) is centred on y = n - 1 - j.
        let (y0, y1) = (-0.5, n as f64 - 0.5);
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, y0..y1)?;
        let ordinal = |v: &f64| -> String {
            let j = n as f64 - 1.0 - v.round();
            if j < 0.0 || (v - v.round()).abs() > 1e-6 {
                return String::new();
            }
            self.lanes
                .get(j as usize)
                .map_or(String::new(), |l| l.ordinal.to_string())
        };
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("request (ordinal, in arrival order)")
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&ordinal)
            .y_labels(n.min(12))
            .disable_y_mesh()
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218))
            .draw()?;
        let (w, h) = chart.plotting_area().dim_in_pixel();
        let width = w as usize;
        for (a, b) in merge_spans(&self.outages, lo, hi, width) {
            if b > lo && a < hi {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(a.max(lo), y0), (b.min(hi), y1)],
                    palette::OUTAGE.mix(0.15).filled(),
                )))?;
            }
        }
        // A bar is at least a pixel wide; half a lane high (a pixel at least).
        let px = (hi - lo) / w.max(1) as f64;
        let lane_px = f64::from(h) / n as f64;
        let half = (0.3f64).max(0.5 / lane_px).min(0.5);
        let clip = |t: f64| t.clamp(lo, hi);
        let mark = ((lane_px * 0.9) as u32).clamp(2, 6);
        for (j, lane) in self.lanes.iter().enumerate() {
            let y = n as f64 - 1.0 - j as f64;
            let (a, b) = (lane.start, lane.stop.unwrap_or(hi));
            if b >= lo && a <= hi {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(clip(a), y), (clip(b), y)],
                    LIFETIME.stroke_width(1),
                )))?;
            }
            for bar in &lane.bars {
                let stop = bar.end.unwrap_or(hi);
                if let Some(d) = bar.done.filter(|d| *d > stop && *d >= lo && stop <= hi) {
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(clip(stop), y), (clip(d), y)],
                        ORPHAN.stroke_width(1),
                    )))?;
                }
                if stop < lo || bar.send > hi {
                    continue;
                }
                let (a, b) = (clip(bar.send), clip(stop));
                let b = b.max(a + px);
                let colour = palette::outcome_colour(outcome_name(&bar.outcome));
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(a, y - half), (b, y + half)],
                    colour.filled(),
                )))?;
            }
            for (t, kind) in lane.refusals.iter().filter(|(t, _)| (lo..=hi).contains(t)) {
                let colour = match kind {
                    Refusal::Budget => palette::BUDGET,
                    Refusal::Breaker => palette::BREAKER,
                };
                chart.draw_series(std::iter::once(TriangleMarker::new(
                    (*t, y),
                    mark,
                    colour.filled(),
                )))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(ordinal: u64, start: f64, stop: Option<f64>) -> Lane {
        Lane {
            ordinal,
            start,
            stop,
            bars: Vec::new(),
            refusals: Vec::new(),
        }
    }

    #[test]
    fn the_window_is_around_the_first_outage_and_lanes_meet_it() {
        let traces = Traces {
            lanes: vec![
                lane(0, 0.5, Some(1.0)),
                lane(1, 6.0, Some(7.0)),
                lane(2, 40.0, None),
                lane(3, 30.0, Some(31.0)),
            ],
            latest: 41.0,
        };
        let c = SwimlaneChart::new(&traces, vec![(20.0, 21.0), (8.0, 12.0)], 60.0, "x").unwrap();
        assert_eq!(c.window, (6.0, 22.0));
        assert!(c.around_outage);
        assert_eq!(
            c.lanes.iter().map(|l| l.ordinal).collect::<Vec<_>>(),
            vec![1]
        );
        let c = SwimlaneChart::new(&traces, vec![], 60.0, "x").unwrap();
        assert_eq!((c.window, c.lanes.len()), ((0.0, 60.0), 4));
        assert!(SwimlaneChart::new(&traces, vec![(100.0, 101.0)], 3.0, "x").is_some());
        // Nobody alive in the window: no chart.
        let one = Traces {
            lanes: vec![lane(0, 0.0, Some(0.1))],
            latest: 0.1,
        };
        assert!(SwimlaneChart::new(&one, vec![(30.0, 31.0)], 60.0, "x").is_none());
    }

    #[test]
    fn more_lanes_than_the_cap_are_spread_evenly() {
        let traces = Traces {
            lanes: (0..1000).map(|k| lane(k, 1.0, None)).collect(),
            latest: 2.0,
        };
        let c = SwimlaneChart::new(&traces, vec![], 10.0, "x").unwrap();
        assert_eq!(c.lanes.len(), MAX_LANES);
        assert_eq!(c.meeting, 1000);
        assert_eq!(c.lanes[0].ordinal, 0);
        assert_eq!(c.lanes[1].ordinal, 5);
        assert_eq!(c.lanes[MAX_LANES - 1].ordinal, 995);
        assert!(c.caption().contains("200 of the 1000"));
    }
}
