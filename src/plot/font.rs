//! The bundled font: DejaVu Sans (regular and bold, from the `dejavu` crate), registered
//! once with plotters as `"sans-serif"`, so charts draw the same glyphs on every machine
//! and never look for system font libraries.

use std::sync::Once;

use plotters::style::{register_font, FontStyle};

/// The family name charts ask for.
pub(crate) const FAMILY: &str = "sans-serif";

static REGISTER: Once = Once::new();

/// Registers the bundled font with plotters; later calls do nothing.
///
/// Every chart calls this before drawing, so callers (tests, benches, the binary) need
/// not remember to.
pub(crate) fn ensure_registered() {
    REGISTER.call_once(|| {
        // The bytes are the crate's own TTF files: they always parse, and a failure
        // here would show at once in every test as a missing font.
        let _ = register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular());
        let _ = register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold());
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::style::{FontDesc, IntoFont};

    #[test]
    fn the_bundled_font_measures_text_after_registration() {
        ensure_registered();
        ensure_registered();
        let font: FontDesc = (FAMILY, 20).into_font();
        let (w, h) = font.box_size("retrysim").expect("font registered");
        assert!(w > 40 && h > 5, "box {w}x{h}");
        let bold: FontDesc = (FAMILY, 20, FontStyle::Bold).into_font();
        assert!(bold.box_size("retrysim").is_ok());
    }
}
