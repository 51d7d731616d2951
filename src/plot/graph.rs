//! `graph`: the service graph of a `[[services]]` scenario as boxes and arrows, with
//! what the run measured on it.
//!
//! The fleets are boxes in the leftmost column; every service sits one column right of
//! its deepest caller (the longest path from a fleet), so every arrow points right.
//! Within a column the boxes are stacked in the order the calls reach them (fleets in
//! order, then each service's calls in order), so the callees of one fan-out are
//! stacked together.
//!
//! ```text
//! ┌──────┐ 1.47/req ┌──────────┐ 2.16/req ┌─────────┐ 6.10/req ┌────┐
//! │users │ ───────▶ │frontend  │ ───────▶ │backend  │ ───────▶ │db  │
//! │fleet │          │servers 100          │peak 71% │          │    │
//! └──────┘          └──────────┘          └─────────┘          └────┘
//! ```
//!
//! An arrow is labelled with its callee's `service_<name>_attempts_per_request` and a
//! box with its servers and `service_<name>_utilisation_peak` (both the mean over the
//! folder's runs, from `summary.csv`); the box's fill is the peak utilisation's class
//! ([`palette::UTILISATION_CLASSES`]). The structure is the graph's shape the manifest
//! records (`[plot.graph]`); the geometry is [`super::graph_layout`].

use std::collections::HashMap;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::export::manifest::GraphShape;
use crate::metrics::columns::{
    service_column, SERVICE_ATTEMPTS_PER_REQUEST, SERVICE_UTILISATION_PEAK,
};

use super::canvas::{frame, Chart, DrawResult, Entry, Swatch, SIZE};
use super::data::CsvTable;
use super::font::FAMILY;
use super::graph_layout::{columns, layout, port, reach_order, route};
use super::palette;

/// Height of one text line in a box, pixels.
const LINE_H: i32 = 18;
/// Text padding inside a box, pixels.
const PAD: i32 = 6;
/// Largest the chart is drawn, pixels.
const MAX_SIZE: (u32, u32) = (3000, 2400);
/// How far an arrow's label sits above the arrow's middle, pixels.
const LABEL_RISE: i32 = 11;

/// One box: a fleet or a service.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// Its name.
    pub name: String,
    /// Whether it is a fleet (else a service).
    pub fleet: bool,
    /// Its column: 0 for fleets, the longest path from a fleet for services.
    pub column: usize,
    /// A service's servers (`None`: unlimited).
    pub servers: Option<u32>,
    /// A service's peak utilisation, mean over the runs.
    pub peak: Option<f64>,
}

/// One arrow: a fleet's or a service's calls to a service.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Edge {
    /// The caller's node.
    pub from: usize,
    /// The callee's node.
    pub to: usize,
    /// The callee's attempts per logical request, mean over the runs.
    pub attempts: Option<f64>,
}

/// The graph drawn: nodes in drawing order (fleets, then services column by column in
/// the order the calls reach them) and the arrows between them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Graph {
    /// The boxes.
    pub nodes: Vec<Node>,
    /// The arrows, each caller-callee pair once.
    pub edges: Vec<Edge>,
}

/// The mean over the rows of `summary`'s column `name`, when it has a value.
fn mean_of(summary: &CsvTable, name: &str) -> Option<f64> {
    let values: Vec<f64> = summary.numbers(name).ok()?.into_iter().flatten().collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

impl Graph {
    /// The graph of `shape` with the measurements of `summary`; a call or target that
    /// names no service of it is left out.
    pub(crate) fn of(shape: &GraphShape, summary: &CsvTable) -> Graph {
        let n = shape.services.len();
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (i, s) in shape.services.iter().enumerate() {
            index.entry(s.name.as_str()).or_insert(i);
        }
        let find = |name: &str| index.get(name).copied().unwrap_or(usize::MAX);
        let calls: Vec<Vec<usize>> = shape
            .services
            .iter()
            .map(|s| s.calls.iter().map(|c| find(c)).collect())
            .collect();
        let col = columns(&calls);
        let roots: Vec<usize> = shape.fleets.iter().map(|f| find(&f.target)).collect();
        let reach = reach_order(&roots, &calls);
        // Drawing order: column by column, each in reach order.
        let mut order = reach.clone();
        order.sort_by_key(|s| col[*s]);
        let mut nodes: Vec<Node> = shape
            .fleets
            .iter()
            .map(|f| Node {
                name: f.name.clone(),
                fleet: true,
                column: 0,
                servers: None,
                peak: None,
            })
            .collect();
        let mut node_of = vec![0usize; n];
        for &s in &order {
            let svc = &shape.services[s];
            node_of[s] = nodes.len();
            nodes.push(Node {
                name: svc.name.clone(),
                fleet: false,
                column: col[s],
                servers: svc.servers.finite(),
                peak: mean_of(
                    summary,
                    &service_column(&svc.name, &SERVICE_UTILISATION_PEAK),
                ),
            });
        }
        let attempts: Vec<Option<f64>> = shape
            .services
            .iter()
            .map(|s| {
                mean_of(
                    summary,
                    &service_column(&s.name, &SERVICE_ATTEMPTS_PER_REQUEST),
                )
            })
            .collect();
        let mut edges: Vec<Edge> = Vec::new();
        let mut add = |from: usize, to: usize| {
            if to < n && !edges.iter().any(|e| e.from == from && e.to == node_of[to]) {
                edges.push(Edge {
                    from,
                    to: node_of[to],
                    attempts: attempts[to],
                });
            }
        };
        for (i, &t) in roots.iter().enumerate() {
            add(i, t);
        }
        for (s, cs) in calls.iter().enumerate() {
            for &c in cs {
                add(node_of[s], c);
            }
        }
        Graph { nodes, edges }
    }
}

/// The text lines of a box: the name, then what it is and what the run measured.
fn box_lines(n: &Node) -> Vec<String> {
    if n.fleet {
        return vec![n.name.clone(), "fleet".into()];
    }
    vec![
        n.name.clone(),
        match n.servers {
            Some(s) => format!("servers {s}"),
            None => "servers ∞".into(),
        },
        match n.peak {
            Some(p) => format!("peak util {:.0}%", p * 100.0),
            None => "peak util n/a".into(),
        },
    ]
}

/// Attempts per request as an arrow's label: three significant digits.
pub(crate) fn attempts_label(a: Option<f64>) -> String {
    match a {
        Some(v) if v.is_finite() => {
            let digits = if v.abs() >= 100.0 {
                0
            } else if v.abs() >= 10.0 {
                1
            } else {
                2
            };
            format!("{v:.digits$}/req")
        }
        _ => "n/a".into(),
    }
}

/// `text` cut (with an ellipsis) to at most `max` pixels wide in `font`.
fn fit_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    font: &TextStyle,
    max: i32,
) -> Option<String> {
    let wide = |s: &str| {
        area.estimate_text_size(s, font)
            .map_or(i32::MAX, |(w, _)| w as i32)
    };
    if wide(text) <= max {
        return Some(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    (1..chars.len())
        .rev()
        .map(|k| format!("{}…", chars[..k].iter().collect::<String>()))
        .find(|s| wide(s) <= max)
}

/// The service graph of one folder.
#[derive(Debug)]
pub(crate) struct GraphChart<'a> {
    /// What is drawn.
    pub graph: Graph,
    /// Scenario name (for the title).
    pub scenario: &'a str,
    /// Runs the numbers are the mean of.
    pub runs: usize,
}

impl GraphChart<'_> {
    fn legend(&self) -> Vec<Entry> {
        let mut l = vec![
            Entry::new("fleet", Swatch::Band(palette::FLEET_FILL, 1.0)),
            Entry::new(
                "call: callee attempts/request",
                Swatch::Line(palette::GRAPH_INK),
            ),
        ];
        for (_, c, label) in palette::UTILISATION_CLASSES {
            l.push(Entry::new(label, Swatch::Band(c, 1.0)));
        }
        if self
            .graph
            .nodes
            .iter()
            .any(|n| !n.fleet && n.peak.is_none())
        {
            l.push(Entry::new(
                "utilisation unknown",
                Swatch::Band(palette::UNKNOWN_FILL, 1.0),
            ));
        }
        l
    }
}

impl Chart for GraphChart<'_> {
    fn name(&self) -> String {
        "graph".into()
    }

    fn size(&self) -> (u32, u32) {
        // Room for every box at full size: wider with more columns, taller with more
        // boxes in a column (the legend panel and title take the rest).
        let ncol = self
            .graph
            .nodes
            .iter()
            .map(|n| n.column + 1)
            .max()
            .unwrap_or(1);
        let mut per = vec![0u32; ncol];
        for n in &self.graph.nodes {
            per[n.column] += 1;
        }
        let tallest = per.into_iter().max().unwrap_or(1);
        (
            (250 + 185 * ncol as u32).clamp(SIZE.0, MAX_SIZE.0),
            (120 + 95 * tallest).clamp(SIZE.1, MAX_SIZE.1),
        )
    }

    fn title(&self) -> String {
        let runs = if self.runs == 1 {
            "1 run".to_string()
        } else {
            format!("mean of {} runs", self.runs)
        };
        format!("Service graph: {} ({runs})", self.scenario)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let area = frame(root, &self.title(), &self.legend())?.margin(10, 10, 10, 10);
        let (w, h) = area.dim_in_pixel();
        let g = &self.graph;
        let cols: Vec<usize> = g.nodes.iter().map(|n| n.column).collect();
        let rects = layout(&cols, w as i32, h as i32);
        let ink = palette::GRAPH_INK;

        let bold: TextStyle = (FAMILY, 15, FontStyle::Bold).into_font().into();
        let plain: TextStyle = (FAMILY, 13).into_font().into();
        // Arrows first: a box drawn later hides a line that crosses it.
        let count = |f: &dyn Fn(&Edge) -> usize, node: usize| {
            g.edges.iter().filter(|e| f(e) == node).count()
        };
        let mut labels = Vec::new();
        for (k, e) in g.edges.iter().enumerate() {
            let (a, b) = (rects[e.from], rects[e.to]);
            let out_i = g.edges[..k].iter().filter(|x| x.from == e.from).count();
            let in_i = g.edges[..k].iter().filter(|x| x.to == e.to).count();
            let start = (a.x1, port(&a, out_i, count(&|x: &Edge| x.from, e.from)));
            let tip = (b.x0 - 1, port(&b, in_i, count(&|x: &Edge| x.to, e.to)));
            let path = route(
                start,
                tip,
                &cols,
                &rects,
                (g.nodes[e.from].column, g.nodes[e.to].column),
                h as i32,
            );
            let (first, before_tip) = (path[1], path[path.len() - 2]);
            area.draw(&PathElement::new(path, ink.stroke_width(2)))?;
            let (dx, dy) = ((tip.0 - before_tip.0) as f64, (tip.1 - before_tip.1) as f64);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (ux, uy) = (dx / len, dy / len);
            let back = (tip.0 as f64 - 11.0 * ux, tip.1 as f64 - 11.0 * uy);
            let side = |s: f64| {
                (
                    (back.0 - 5.0 * uy * s) as i32,
                    (back.1 + 5.0 * ux * s) as i32,
                )
            };
            area.draw(&Polygon::new(
                vec![tip, side(1.0), side(-1.0)],
                ink.filled(),
            ))?;
            // Above the middle of the arrow's first leg, clear of the line; without the
            // unit when the gap between the columns is narrow.
            let mut text = attempts_label(e.attempts);
            let gap = (first.0 - start.0) as u32;
            if area.estimate_text_size(&text, &plain)?.0 + 6 > gap {
                text = text.trim_end_matches("/req").to_string();
            }
            labels.push((
                (
                    (start.0 + first.0) / 2,
                    (start.1 + first.1) / 2 - LABEL_RISE,
                ),
                text,
            ));
        }

        for (n, r) in g.nodes.iter().zip(&rects) {
            let fill = if n.fleet {
                palette::FLEET_FILL
            } else {
                palette::utilisation_fill(n.peak)
            };
            area.draw(&Rectangle::new([(r.x0, r.y0), (r.x1, r.y1)], fill.filled()))?;
            area.draw(&Rectangle::new(
                [(r.x0, r.y0), (r.x1 - 1, r.y1 - 1)],
                ink.stroke_width(1),
            ))?;
            // As many lines as the box holds, each cut to its width.
            let fit = ((r.y1 - r.y0 - 2 * PAD + 2) / LINE_H).max(0) as usize;
            let lines: Vec<String> = box_lines(n).into_iter().take(fit).collect();
            let top = r.mid_y() - (lines.len() as i32 * LINE_H) / 2 + LINE_H / 2;
            for (i, line) in lines.iter().enumerate() {
                let font = if i == 0 { &bold } else { &plain };
                let Some(text) = fit_width(&area, line, font, r.x1 - r.x0 - 2 * PAD) else {
                    continue;
                };
                let at = ((r.x0 + r.x1) / 2, top + i as i32 * LINE_H);
                area.draw(&Text::new(
                    text,
                    at,
                    font.clone().pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }

        // Labels last, on a white patch, so no line runs through their text.
        let font = plain.pos(Pos::new(HPos::Center, VPos::Center));
        for ((x, y), text) in labels {
            let (tw, th) = area.estimate_text_size(&text, &font)?;
            let (hw, hh) = (tw as i32 / 2 + 3, th as i32 / 2 + 2);
            area.draw(&Rectangle::new(
                [(x - hw, y - hh), (x + hw, y + hh)],
                WHITE.filled(),
            ))?;
            area.draw(&Text::new(text, (x, y), font.clone()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrow_labels_keep_three_significant_digits() {
        assert_eq!(attempts_label(Some(1.470921513)), "1.47/req");
        assert_eq!(attempts_label(Some(16.04)), "16.0/req");
        assert_eq!(attempts_label(Some(254.6)), "255/req");
        assert_eq!(attempts_label(None), "n/a");
    }
}
