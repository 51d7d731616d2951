//! Rules of a service graph: `[[services]]` with their `[[services.calls]]`, or the
//! one-service graph named `dependency` that a `[dependency]` table stands for; and
//! the names that fleets (`target`) and outages (`target`) use to point into it.

use std::collections::HashMap;

use super::dependency::{validate_capacity, validate_dependency};
use super::fleet::validate_layer;
use super::*;
use crate::model::field::{list_cap, Ctx, R};
use crate::scenario::error::shown;

/// Most `[[services]]` in a graph.
pub(crate) const MAX_SERVICES: usize = 64;
/// Most `[[services.calls]]` of one service.
pub(crate) const MAX_CALLS: usize = 16;
/// Most callees of one fan-out call.
pub(crate) const MAX_FANOUT: usize = 16;
/// The name of the one service that `[dependency]` stands for.
pub(crate) const DEPENDENCY: &str = "dependency";

/// The services of `file`, and whether it wrote them as a graph (`[[services]]`).
pub(super) fn validate_services(c: &Ctx, file: &ScenarioFile) -> R<(Vec<ServiceConfig>, bool)> {
    match (&file.dependency, file.services.is_empty()) {
        (Some(_), false) => c.err(
            "services",
            "cannot be used together with [dependency]: write the dependency as one of the [[services]]",
        ),
        (None, true) => c.err(
            "dependency",
            "is required: a [dependency] table, or a graph of [[services]]",
        ),
        (Some(d), true) => Ok((
            vec![ServiceConfig {
                name: DEPENDENCY.to_string(),
                capacity: validate_dependency(c, d)?,
                calls: Vec::new(),
                hold_threads: true,
                on_failure: OnFailure::Error,
                overloaded_status: false,
            }],
            false,
        )),
        (None, false) => Ok((graph(c, &file.services)?, true)),
    }
}

fn graph(c: &Ctx, files: &[ServiceFile]) -> R<Vec<ServiceConfig>> {
    list_cap(c, "services", files.len(), MAX_SERVICES, "services")?;
    let mut index = HashMap::with_capacity(files.len());
    for (i, sf) in files.iter().enumerate() {
        let name = service_name(c, &format!("services[{i}].name"), &sf.name)?;
        if index.insert(name, i as u16).is_some() {
            return c.err(
                format!("services[{i}].name"),
                format!("\"{}\" is used by another service", shown(&sf.name)),
            );
        }
    }
    let known = || {
        let mut v: Vec<_> = files.iter().map(|s| format!("\"{}\"", s.name)).collect();
        v.sort();
        v.join(", ")
    };
    let mut out = Vec::with_capacity(files.len());
    for (i, sf) in files.iter().enumerate() {
        let p = format!("services[{i}]");
        if sf.servers.is_none() {
            return c.err(
                format!("{p}.servers"),
                format!(
                    "is required: the requests service \"{}\" serves at once, its threads (a count or \"unlimited\")",
                    shown(&sf.name)
                ),
            );
        }
        if sf.service_time.is_none() {
            return c.err(
                format!("{p}.service_time"),
                format!(
                    "is required: the own work of service \"{}\" per request, before its calls (a duration such as \"5ms\" or a distribution)",
                    shown(&sf.name)
                ),
            );
        }
        let capacity = validate_capacity(c, &p, &sf.capacity())?;
        list_cap(c, &format!("{p}.calls"), sf.calls.len(), MAX_CALLS, "calls")?;
        let mut calls = Vec::with_capacity(sf.calls.len());
        for (j, cf) in sf.calls.iter().enumerate() {
            let q = format!("{p}.calls[{j}]");
            let names: Vec<&String> = match &cf.to {
                ToFile::One(n) => vec![n],
                ToFile::Many(v) => v.iter().collect(),
            };
            if names.is_empty() {
                return c.err(format!("{q}.to"), "must name at least one service");
            }
            list_cap(c, &format!("{q}.to"), names.len(), MAX_FANOUT, "callees")?;
            let mut to = Vec::with_capacity(names.len());
            for n in names {
                let Some(&k) = index.get(n.trim()) else {
                    return c.err(
                        format!("{q}.to"),
                        format!("names no service: \"{}\" (known: {})", shown(n), known()),
                    );
                };
                if k as usize == i {
                    return c.err(
                        format!("{q}.to"),
                        format!(
                            "\"{}\" calls itself: a service graph must be acyclic",
                            shown(n)
                        ),
                    );
                }
                if to.contains(&k) {
                    return c.err(format!("{q}.to"), format!("names \"{}\" twice", shown(n)));
                }
                to.push(k);
            }
            let n = to.len() as u64;
            let join = match &cf.join {
                None => Join::All,
                Some(JoinFile::Word(w)) if w == "all" => Join::All,
                Some(JoinFile::Word(w)) if w == "any" => Join::Any,
                Some(JoinFile::Word(w)) => {
                    return c.err(
                        format!("{q}.join"),
                        format!(
                            "must be \"all\", \"any\" or {{ quorum = k }} (found \"{}\")",
                            shown(w)
                        ),
                    )
                }
                Some(JoinFile::Quorum { quorum }) => {
                    if *quorum < 1 || *quorum > n {
                        return c.err(
                            format!("{q}.join.quorum"),
                            format!(
                                "must be between 1 and the {n} callee{} of `to` (found {quorum})",
                                if n == 1 { "" } else { "s" }
                            ),
                        );
                    }
                    Join::Quorum(*quorum as u32)
                }
            };
            if cf.layers.len() > 16 {
                return c.err(
                    format!("{q}.layers"),
                    format!("at most 16 layers (found {})", cf.layers.len()),
                );
            }
            let mut layers = Vec::with_capacity(cf.layers.len());
            for (k, l) in cf.layers.iter().enumerate() {
                layers.push(validate_layer(
                    c,
                    &format!("{q}.layers[{k}]"),
                    k,
                    l,
                    1,
                    false,
                )?);
            }
            let guards = crate::model::guard::validate(
                c,
                &q,
                cf.max_concurrent,
                cf.bulkhead_queue,
                cf.pool.as_ref(),
                &layers,
            )?;
            calls.push(CallConfig {
                to,
                join,
                cancel_rest: cf
                    .cancel_rest
                    .unwrap_or(crate::model::config::DEFAULT_CANCEL_REST),
                propagate_deadline: cf
                    .propagate_deadline
                    .unwrap_or(crate::model::config::DEFAULT_PROPAGATE_DEADLINE),
                layers,
                guards,
            });
        }
        out.push(ServiceConfig {
            name: sf.name.trim().to_string(),
            capacity,
            calls,
            hold_threads: sf
                .hold_threads
                .unwrap_or(crate::model::config::DEFAULT_HOLD_THREADS),
            on_failure: sf.on_failure.unwrap_or_default(),
            overloaded_status: sf
                .overloaded_status
                .unwrap_or(crate::model::config::DEFAULT_OVERLOADED_STATUS),
        });
    }
    acyclic(c, &out)?;
    Ok(out)
}

/// A service name: it becomes part of column names (`service_<name>_shed`).
fn service_name(c: &Ctx, field: &str, n: &str) -> R<String> {
    let t = n.trim();
    if t.is_empty()
        || t.len() > MAX_NAME_BYTES
        || !t
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
    {
        return c.err(
            field,
            format!(
                "must be 1 to {MAX_NAME_BYTES} letters, digits, '_' or '-' (it names columns such as service_<name>_shed) (found \"{}\")",
                shown(n)
            ),
        );
    }
    Ok(t.to_string())
}

/// Refuses a cycle of calls (a request would never end), naming it.
fn acyclic(c: &Ctx, services: &[ServiceConfig]) -> R<()> {
    // 0 = unvisited, 1 = on the path, 2 = done.
    let mut mark = vec![0u8; services.len()];
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        i: usize,
        s: &[ServiceConfig],
        mark: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<(usize, usize, Vec<usize>)> {
        mark[i] = 1;
        path.push(i);
        for (j, call) in s[i].calls.iter().enumerate() {
            for &k in &call.to {
                let k = k as usize;
                if mark[k] == 1 {
                    let from = path.iter().position(|&p| p == k).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    cycle.push(k);
                    return Some((i, j, cycle));
                }
                if mark[k] == 0 {
                    if let Some(found) = visit(k, s, mark, path) {
                        return Some(found);
                    }
                }
            }
        }
        path.pop();
        mark[i] = 2;
        None
    }
    for i in 0..services.len() {
        if mark[i] == 0 {
            if let Some((svc, call, cycle)) = visit(i, services, &mut mark, &mut path) {
                let names: Vec<&str> = cycle.iter().map(|&k| services[k].name.as_str()).collect();
                return c.err(
                    format!("services[{svc}].calls[{call}].to"),
                    format!(
                        "makes a cycle {}: a service graph must be acyclic",
                        names.join(" → ")
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The service a fleet or an outage names with `target`: `field` names the key.
/// Without one, a fleet calls the graph's root (the one service nobody calls).
pub(super) fn target(
    c: &Ctx,
    field: &str,
    services: &[ServiceConfig],
    name: Option<&str>,
) -> R<Option<u16>> {
    let known = || {
        let mut v: Vec<_> = services.iter().map(|s| format!("\"{}\"", s.name)).collect();
        v.sort();
        v.join(", ")
    };
    match name {
        Some(n) => match services.iter().position(|s| s.name == n.trim()) {
            Some(i) => Ok(Some(i as u16)),
            None => c.err(
                field,
                format!("names no service: \"{}\" (known: {})", shown(n), known()),
            ),
        },
        None => Ok(None),
    }
}

/// The service a fleet calls when it names none: the only service nobody calls.
pub(super) fn root(c: &Ctx, field: &str, services: &[ServiceConfig]) -> R<u16> {
    let called: Vec<bool> = (0..services.len())
        .map(|i| {
            services
                .iter()
                .any(|s| s.calls.iter().any(|call| call.to.contains(&(i as u16))))
        })
        .collect();
    let roots: Vec<usize> = (0..services.len()).filter(|&i| !called[i]).collect();
    match roots.as_slice() {
        [only] => Ok(*only as u16),
        _ => {
            let names: Vec<_> = roots
                .iter()
                .map(|&i| format!("\"{}\"", services[i].name))
                .collect();
            c.err(
                field,
                format!(
                    "is required: more than one service is called by no other ({}), so name the one this fleet calls",
                    names.join(", ")
                ),
            )
        }
    }
}
