//! `config get` and `config list`: the merged configuration, with where each value comes from.

use super::*;

/// The loop `query` names, when one is given.
fn record(ws: &Workspace, query: Option<&str>) -> Result<Option<loops::LoopRecord>> {
    query
        .map(|q| loops::load(ws, &loops::resolve(ws, q)?))
        .transpose()
}

pub(super) fn get(
    ui: &mut Ui,
    ws: &Workspace,
    key: &str,
    r#loop: Option<&str>,
    show_origin: bool,
) -> Result<u8> {
    edit::known(key)?;
    let rec = record(ws, r#loop)?;
    let cfg = crate::commands::load_config(ui, ws, rec.as_ref())?;
    let Some(entry) = cfg.get(key) else {
        return Ok(1);
    };
    let origin = if show_origin {
        format!("{}\t", origin_of(entry.layer, entry.path, None))
    } else {
        String::new()
    };
    writeln!(ui.out(), "{origin}{}", display_value(entry.value))?;
    Ok(0)
}

pub(super) fn list(
    ui: &mut Ui,
    ws: &Workspace,
    r#loop: Option<&str>,
    show_origin: bool,
    json: bool,
) -> Result<u8> {
    let rec = record(ws, r#loop)?;
    let cfg = crate::commands::load_config(ui, ws, rec.as_ref())?;
    if json {
        let mut items: Vec<serde_json::Value> = cfg
            .list()
            .iter()
            .map(|e| {
                serde_json::json!({
                    "key": e.key,
                    "value": serde_json::to_value(e.value).unwrap_or_default(),
                    "layer": e.layer.to_string(),
                    "path": e.path,
                })
            })
            .collect();
        if show_origin {
            items.extend(cfg.ignored.iter().map(|i| {
                serde_json::json!({
                    "key": i.key,
                    "value": i.shown,
                    "layer": i.layer.to_string(),
                    "path": i.path,
                    "line": i.line,
                    "ignored": i.why,
                })
            }));
        }
        return crate::commands::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    for e in cfg.list() {
        let origin = if show_origin {
            format!("{}\t", origin_of(e.layer, e.path, None))
        } else {
            String::new()
        };
        writeln!(ui.out(), "{origin}{}={}", e.key, display_value(e.value))?;
    }
    // What a layer set but may not: shown where it was written, with why.
    if show_origin {
        for i in &cfg.ignored {
            writeln!(
                ui.out(),
                "{}\t{}={}\t(ignored: {})",
                origin_of(i.layer, Some(&i.path), i.line),
                i.key,
                i.shown,
                i.why
            )?;
        }
    }
    Ok(0)
}

pub(super) fn origin_of(layer: Layer, path: Option<&Path>, line: Option<usize>) -> String {
    match (path, line) {
        (Some(p), Some(n)) => format!("{layer}:{}:{n}", p.display()),
        (Some(p), None) => format!("{layer}:{}", p.display()),
        _ => layer.to_string(),
    }
}

/// A value as `config get` prints it: strings bare, the rest as TOML on one line.
pub(super) fn display_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => config::policy::visible(s),
        toml::Value::Table(t) if t.is_empty() => "{}".into(),
        toml::Value::Table(t) => {
            let items: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {v}", toml::Value::String(k.clone())))
                .collect();
            config::policy::visible(&format!("{{ {} }}", items.join(", ")))
        }
        other => config::policy::visible(&other.to_string()),
    }
}
