//! `aws_config`: an AWS shared config file (`~/.aws/config`), one profile's
//! `retry_mode` and `max_attempts` mapped onto the `aws_legacy`, `aws_standard` and
//! `aws_adaptive` presets, as botocore (boto3, AWS CLI v1) reads them.
//!
//! - The file is read as Python's `configparser.RawConfigParser` reads it (botocore's
//!   `configloader.raw_config_parse`): `[section]` headers, `key = value` or
//!   `key: value` (keys in any case), whole-line `#` and `;` comments (a `#` after a
//!   value is part of the value), indented lines continuing a value (nested settings
//!   such as `s3 =`); a section or a key written twice in a section is refused, as is
//!   a setting before any section.
//! - Profiles (`configloader.build_profile_map`): `[profile NAME]` is the profile NAME,
//!   `[default]` (or `[profile default]`, the later one winning) the profile
//!   `default`; `[NAME]` alone is the credentials file's form, not a profile of the
//!   config file.
//! - `retry_mode`: `legacy`, `standard` or `adaptive`; absent, botocore's default is
//!   `legacy` (`configprovider.py`), or `standard` when `defaults_mode` is anything but
//!   `legacy` (`sdk-default-configuration.json`). The AWS CLI v2 and newer SDKs default
//!   to `standard`: write `retry_mode` to say which.
//! - `max_attempts`: the total attempts, the first included (botocore's
//!   `total_max_attempts`), at least 1; absent, the mode's default (5 legacy, 3
//!   standard and adaptive).
//! - Other settings (region, credentials, output, ...) do not change retries and are
//!   not read.

use super::{Format, Mapped, Refusal, Selector};
use crate::scenario::error::shown;
use crate::scenario::preset::{AWS_ADAPTIVE, AWS_LEGACY, AWS_STANDARD};

/// The format.
pub(crate) const FORMAT: Format = Format {
    name: "aws_config",
    about: "an AWS shared config file (~/.aws/config): a profile's retry_mode and max_attempts, as botocore reads them",
    selector: &[(
        "profile",
        "the profile (`[profile NAME]`; default `default`, the `[default]` section)",
    )],
    map,
};

/// A key of a section: its name (lower case), value, and line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// The key, lower case as configparser stores it.
    pub key: String,
    /// The value, continuation lines joined with newlines.
    pub value: String,
    /// The line of the key.
    pub line: u64,
}

/// A section: its header as written between the brackets, line and settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Section {
    /// The header (`profile dev`).
    pub name: String,
    /// The header's line.
    pub line: u64,
    /// Its settings in file order.
    pub settings: Vec<Setting>,
}

/// Parses an INI file as `configparser.RawConfigParser` (strict) does.
pub(crate) fn parse_ini(text: &str) -> Result<Vec<Section>, Refusal> {
    let mut out: Vec<Section> = Vec::new();
    // The indent of the current setting, while a value may continue.
    let mut open: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let raw = if i == 0 {
            raw.trim_start_matches('\u{feff}')
        } else {
            raw
        };
        let stripped = raw.trim();
        if stripped.starts_with('#') || stripped.starts_with(';') {
            continue;
        }
        if stripped.is_empty() {
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if let (Some(level), Some(s)) = (open, out.last_mut()) {
            if indent > level {
                if let Some(k) = s.settings.last_mut() {
                    k.value.push('\n');
                    k.value.push_str(stripped);
                }
                continue;
            }
        }
        open = None;
        if let (Some(rest), Some(end)) = (stripped.strip_prefix('['), stripped.rfind(']')) {
            if end > 0 {
                let name = rest[..end - 1].to_string();
                if let Some(first) = out.iter().find(|s| s.name == name) {
                    return Err(Refusal::at(
                        line,
                        &format!("[{}]", shown(&name)),
                        format!(
                            "is a second section of that name (the first is on line {}), which botocore's parser refuses",
                            first.line
                        ),
                    ));
                }
                out.push(Section {
                    name,
                    line,
                    settings: Vec::new(),
                });
                continue;
            }
        }
        let Some(cut) = stripped.find(['=', ':']) else {
            return Err(Refusal::at(
                line,
                "",
                format!(
                    "is neither a [section] nor `key = value` (found \"{}\")",
                    shown(stripped)
                ),
            ));
        };
        let key = stripped[..cut].trim().to_lowercase();
        let value = stripped[cut + 1..].trim().to_string();
        let Some(s) = out.last_mut() else {
            return Err(Refusal::at(
                line,
                &key,
                "comes before any [section]: botocore's parser refuses a file that does not start with a section header",
            ));
        };
        if let Some(first) = s.settings.iter().find(|k| k.key == key) {
            return Err(Refusal::at(
                line,
                &format!("[{}] {key}", shown(&s.name)),
                format!(
                    "is written twice in the section (first on line {}), which botocore's parser refuses",
                    first.line
                ),
            ));
        }
        s.settings.push(Setting { key, value, line });
        open = Some(indent);
    }
    Ok(out)
}

/// The profile a section names in a config file (`profile dev` → `dev`, `default`).
fn profile_of(header: &str) -> Option<String> {
    if header == "default" {
        return Some("default".into());
    }
    if !header.starts_with("profile") {
        return None;
    }
    // shlex.split: words, quotes removed.
    let words: Vec<String> = header
        .split_whitespace()
        .map(|w| w.trim_matches(['"', '\'']).to_string())
        .collect();
    (words.len() == 2).then(|| words[1].clone())
}

/// The keys of a preset, dotted, in its order.
fn preset_keys(toml_text: &str) -> Vec<(String, toml::Value)> {
    let t: toml::Table = toml::from_str(toml_text).expect("preset TOML parses");
    let mut out = Vec::new();
    for (k, v) in t {
        match v {
            toml::Value::Table(part) => {
                for (pk, pv) in part {
                    out.push((format!("{k}.{pk}"), pv));
                }
            }
            v => out.push((k, v)),
        }
    }
    out
}

/// Maps a shared config file's profile onto a layer.
pub(crate) fn map(text: &str, selector: &Selector) -> Result<Mapped, Refusal> {
    let want = selector
        .get("profile")
        .filter(|p| !p.is_empty())
        .map_or("default", String::as_str);
    let sections = parse_ini(text)?;
    let mut found: Option<&Section> = None;
    for s in &sections {
        if profile_of(&s.name).as_deref() == Some(want) {
            found = Some(s);
        }
    }
    let Some(s) = found else {
        let names: Vec<String> = sections
            .iter()
            .filter_map(|s| profile_of(&s.name))
            .map(|p| format!("\"{}\"", shown(&p)))
            .collect();
        let hint = if sections.iter().any(|s| s.name == want) {
            format!(
                " ([{0}] is how the credentials file names a profile; in the config file it is [profile {0}])",
                shown(want)
            )
        } else {
            String::new()
        };
        return Err(Refusal {
            line: None,
            field: String::new(),
            message: format!(
                "has no profile \"{}\"{hint} (the profiles: {})",
                shown(want),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        });
    };
    let field = |k: &str| format!("[{}] {k}", s.name);
    let get = |k: &str| s.settings.iter().find(|x| x.key == k);
    let mut out = Mapped {
        matched: format!("[{}]", s.name),
        ..Mapped::default()
    };
    let (mode, mode_line, mode_field, mode_note) = match get("retry_mode") {
        Some(m) => {
            let mode = match m.value.as_str() {
                "legacy" => "legacy",
                "standard" => "standard",
                "adaptive" => "adaptive",
                v => {
                    return Err(Refusal::at(
                        m.line,
                        &field("retry_mode"),
                        format!(
                            "must be legacy, standard or adaptive, as botocore requires (found \"{}\"{})",
                            shown(v),
                            if v.contains(['#', ';']) {
                                "; botocore reads no comment after a value"
                            } else {
                                ""
                            }
                        ),
                    ))
                }
            };
            (mode, m.line, field("retry_mode"), None)
        }
        None => match get("defaults_mode") {
            Some(d) => match d.value.as_str() {
                "legacy" => (
                    "legacy",
                    d.line,
                    field("defaults_mode"),
                    Some("defaults_mode legacy: botocore's default retry_mode, legacy"),
                ),
                "standard" | "in-region" | "cross-region" | "mobile" | "auto" => (
                    "standard",
                    d.line,
                    field("defaults_mode"),
                    Some("botocore's retry_mode under every defaults_mode but legacy: standard"),
                ),
                v => {
                    return Err(Refusal::at(
                        d.line,
                        &field("defaults_mode"),
                        format!(
                            "must be legacy, standard, in-region, cross-region, mobile or auto, as botocore requires (found \"{}\")",
                            shown(v)
                        ),
                    ))
                }
            },
            None => (
                "legacy",
                s.line,
                format!("[{}]", s.name),
                Some("no retry_mode: botocore's default, legacy (the AWS CLI v2's is standard)"),
            ),
        },
    };
    let preset = match mode {
        "legacy" => AWS_LEGACY,
        "standard" => AWS_STANDARD,
        _ => AWS_ADAPTIVE,
    };
    let mode_rule = |what: &str| {
        format!(
            "botocore's {mode} retry mode{}{what}",
            if what.is_empty() { "" } else { ": " }
        )
    };
    for (k, v) in preset_keys(preset.toml) {
        if k == "max_attempts" {
            match get("max_attempts") {
                Some(m) => {
                    let t = m.value.trim();
                    let n = t
                        .strip_prefix('+')
                        .unwrap_or(t)
                        .replace('_', "")
                        .parse::<i64>()
                        .ok()
                        .filter(|_| !t.is_empty());
                    match n {
                        Some(n) if n >= 1 => {
                            if n as u64 > crate::model::attempts::MAX_ATTEMPTS_CAP {
                                return Err(Refusal::at(
                                    m.line,
                                    &field("max_attempts"),
                                    format!(
                                        "must be at most {} in retrysim (found {n})",
                                        crate::model::attempts::MAX_ATTEMPTS_CAP
                                    ),
                                ));
                            }
                            out.set_by_rule(
                                "max_attempts",
                                n,
                                m.line,
                                &field("max_attempts"),
                                "total attempts, the first included",
                            );
                        }
                        _ => {
                            return Err(Refusal::at(
                                m.line,
                                &field("max_attempts"),
                                format!(
                                    "must be a whole number of at least 1 (the total attempts, the first included), as botocore requires (found \"{}\")",
                                    shown(t)
                                ),
                            ))
                        }
                    }
                }
                None => out.set_by_rule(
                    "max_attempts",
                    v,
                    mode_line,
                    &mode_field,
                    &mode_rule("its default max_attempts"),
                ),
            }
            continue;
        }
        let note = match mode_note {
            Some(n) => format!("{n}; {}", mode_rule("")),
            None => mode_rule(""),
        };
        out.set_by_rule(&k, v, mode_line, &mode_field, &note);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ini_reader_keeps_lines_and_refuses_what_configparser_refuses() {
        let s = parse_ini(
            "# c\n[default]\nRegion = us-east-1\n; c\ns3 =\n  max_concurrent_requests = 20\n[profile dev]# x\nretry_mode: adaptive\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].settings[0].key, "region");
        assert_eq!(s[0].settings[1].value, "\nmax_concurrent_requests = 20");
        assert_eq!((s[1].name.as_str(), s[1].line), ("profile dev", 7));
        assert_eq!(s[1].settings[0].line, 8);
        let e = parse_ini("[a]\nx = 1\n[a]\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = parse_ini("[a]\nx = 1\nX = 2\n").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (Some(3), "[a] x"));
        let e = parse_ini("x = 1\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        let e = parse_ini("[a]\nnot a setting\n").unwrap_err();
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn profiles_are_named_as_botocore_names_them() {
        assert_eq!(profile_of("default").as_deref(), Some("default"));
        assert_eq!(profile_of("profile dev").as_deref(), Some("dev"));
        assert_eq!(profile_of("profile   \"dev\"").as_deref(), Some("dev"));
        assert_eq!(profile_of("dev"), None);
        assert_eq!(profile_of("profile"), None);
        assert_eq!(profile_of("sso-session x"), None);
    }
}
