//! What every chart shares: the [`Chart`] trait, rendering to SVG text and PNG bytes,
//! the frame (title on top, legend panel on the right, so the legend never covers
//! data), and small axis helpers.

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor;

use super::font::{ensure_registered, FAMILY};
use super::PlotError;

/// Width and height of every chart, pixels.
pub(crate) const SIZE: (u32, u32) = (1000, 600);

/// Result of drawing on some backend.
pub(crate) type DrawResult = Result<(), Box<dyn Error>>;

/// A chart that can draw itself on any plotters backend.
pub(crate) trait Chart {
    /// File stem under `plots/` (may hold a `/`), e.g. `timeseries`.
    fn name(&self) -> String;
    /// The title drawn on top (also the caption in the report).
    fn title(&self) -> String;
    /// Width and height in pixels ([`SIZE`] unless the chart needs more room).
    fn size(&self) -> (u32, u32) {
        SIZE
    }
    /// Draws the whole picture on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

fn draw_error(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Renders `chart` as SVG text; `path` only names the chart in errors.
pub(crate) fn render_svg<C: Chart>(chart: &C, path: &Path) -> Result<String, PlotError> {
    ensure_registered();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, chart.size()).into_drawing_area();
        chart.draw(&root).map_err(|e| draw_error(path, e))?;
        root.present().map_err(|e| draw_error(path, e))?;
    }
    Ok(s)
}

/// Renders `chart` as PNG bytes; `path` only names the chart in errors.
pub(crate) fn render_png<C: Chart>(chart: &C, path: &Path) -> Result<Vec<u8>, PlotError> {
    ensure_registered();
    let (w, h) = chart.size();
    let mut buf = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        chart.draw(&root).map_err(|e| draw_error(path, e))?;
        root.present().map_err(|e| draw_error(path, e))?;
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Best);
        let mut wr = enc.write_header().map_err(|e| draw_error(path, e))?;
        wr.write_image_data(&buf).map_err(|e| draw_error(path, e))?;
    }
    Ok(out)
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Swatch {
    /// A solid line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A filled band (shading, confidence band), with its opacity.
    Band(RGBColor, f64),
    /// A line with round markers.
    LineMarker(RGBColor),
    /// A marker alone: a filled triangle.
    Mark(RGBColor),
}

/// One legend line: a swatch and its label.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The label.
    pub label: String,
    /// How it is drawn.
    pub swatch: Swatch,
}

impl Entry {
    /// A legend entry.
    pub(crate) fn new(label: impl Into<String>, swatch: Swatch) -> Entry {
        Entry {
            label: label.into(),
            swatch,
        }
    }
}

/// Title font.
pub(crate) fn title_font() -> TextStyle<'static> {
    (FAMILY, 22, FontStyle::Bold).into_font().into()
}

/// Axis description font.
pub(crate) fn axis_font() -> TextStyle<'static> {
    TextStyle::from((FAMILY, 16).into_font())
}

/// Tick label font.
pub(crate) fn tick_font() -> TextStyle<'static> {
    TextStyle::from((FAMILY, 13).into_font())
}

/// Legend font.
pub(crate) fn legend_font() -> TextStyle<'static> {
    TextStyle::from((FAMILY, 14).into_font())
}

const LEGEND_ROW: i32 = 22;
const LEGEND_MAX_WIDTH: u32 = 350;
const LEGEND_MAX_CHARS: usize = 40;

/// Shortens a label to what the legend panel can show.
fn fit(label: &str) -> String {
    if label.chars().count() <= LEGEND_MAX_CHARS {
        label.to_string()
    } else {
        let s: String = label.chars().take(LEGEND_MAX_CHARS - 1).collect();
        format!("{s}…")
    }
}

/// Clears `root`, draws `title` on top and `legend` in a panel on the right; returns
/// the area left for the plot.
pub(crate) fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    legend: &[Entry],
) -> Result<DrawingArea<DB, Shift>, Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let body = root.margin(10, 0, 0, 0).titled(title, title_font())?;
    if legend.is_empty() {
        return Ok(body.margin(0, 10, 0, 20));
    }
    let font = legend_font();
    let mut widest = 0u32;
    for e in legend {
        let (w, _) = root.estimate_text_size(&fit(&e.label), &font)?;
        widest = widest.max(w);
    }
    let panel = (widest + 80).min(LEGEND_MAX_WIDTH);
    let (w, _) = body.dim_in_pixel();
    let (plot, side) = body.split_horizontally(w.saturating_sub(panel));
    draw_legend(&side, legend)?;
    Ok(plot.margin(0, 10, 0, 10))
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, legend: &[Entry]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let (_, h) = area.dim_in_pixel();
    let capacity = ((h as i32 - 40) / LEGEND_ROW).max(1) as usize;
    let shown = if legend.len() > capacity {
        capacity - 1
    } else {
        legend.len()
    };
    let x0 = 8;
    let mut y = 30;
    let font = legend_font().pos(text_anchor::Pos::new(
        text_anchor::HPos::Left,
        text_anchor::VPos::Center,
    ));
    for e in &legend[..shown] {
        let (a, b) = ((x0, y), (x0 + 28, y));
        match e.swatch {
            Swatch::Line(c) => area.draw(&PathElement::new(vec![a, b], c.stroke_width(3)))?,
            Swatch::Dashed(c) => {
                area.draw(&DashedPathElement::new(vec![a, b], 6, 4, c.stroke_width(2)))?
            }
            Swatch::Band(c, alpha) => area.draw(&Rectangle::new(
                [(x0, y - 7), (x0 + 28, y + 7)],
                c.mix(alpha).filled(),
            ))?,
            Swatch::Mark(c) => {
                area.draw(&TriangleMarker::new((x0 + 14, y), 6, c.filled()))?;
            }
            Swatch::LineMarker(c) => {
                area.draw(&PathElement::new(vec![a, b], c.stroke_width(2)))?;
                area.draw(&Circle::new((x0 + 14, y), 4, c.filled()))?;
            }
        }
        area.draw(&Text::new(fit(&e.label), (x0 + 36, y), font.clone()))?;
        y += LEGEND_ROW;
    }
    if shown < legend.len() {
        area.draw(&Text::new(
            format!("… and {} more", legend.len() - shown),
            (x0, y),
            font,
        ))?;
    }
    Ok(())
}

/// Upper end of an axis that shows values up to `max`, with headroom.
pub(crate) fn upper(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.08
    } else {
        1.0
    }
}

/// A range `[lo, hi]` widened so it is never empty and has a margin.
pub(crate) fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if (hi - lo).abs() < 1e-12 {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - d, hi + d);
    }
    let m = (hi - lo) * 0.05;
    (lo - m, hi + m)
}

/// Splits a series into runs of consecutive present points (gaps break the line).
pub(crate) fn segments(xs: &[f64], ys: &[Option<f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    for (x, y) in xs.iter().zip(ys) {
        match y {
            Some(y) => cur.push((*x, *y)),
            None => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub(crate) use crate::metrics::format::tick;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_split_a_series_into_segments() {
        let xs = [0.0, 1.0, 2.0, 3.0, 4.0];
        let ys = [Some(1.0), None, Some(2.0), Some(3.0), None];
        assert_eq!(
            segments(&xs, &ys),
            vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]
        );
    }

    #[test]
    fn ranges_are_never_empty() {
        assert_eq!(padded(2.0, 2.0), (1.8, 2.2));
        assert_eq!(padded(0.0, 0.0), (-1.0, 1.0));
        assert_eq!(upper(0.0), 1.0);
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(2.5), "2.5");
    }

    #[test]
    fn long_labels_are_cut_with_an_ellipsis() {
        let l = "x".repeat(100);
        assert_eq!(fit(&l).chars().count(), LEGEND_MAX_CHARS);
        assert!(fit(&l).ends_with('…'));
    }
}
