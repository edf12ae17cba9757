//! `show --mounts`: the sandbox's view, every path inside with its host source and mode.

use super::*;

pub(super) fn show_mounts(
    ui: &mut Ui,
    ws: &crate::workspace::Workspace,
    rec: &loops::LoopRecord,
    mode: Option<crate::values::RunMode>,
    json: bool,
) -> Result<u8> {
    let config = crate::commands::load_sandbox_config(ui, ws, rec)?;
    let req = crate::sandbox::Request {
        mode,
        net: None,
        backend: None,
        print_argv: false,
        command: Vec::new(),
        interactive: false,
        ro_same_path: Vec::new(),
        allow_domains: Vec::new(),
        agent_env: Vec::new(),
        session: None,
        timeout: None,
    };
    let spec = crate::sandbox::spec_for(
        ws,
        rec,
        &config,
        &req,
        crate::sandbox::vault_file_names(ws, &rec.vault),
    )?;
    let rows = spec.view();
    if json {
        let items: Vec<serde_json::Value> = rows
            .iter()
            .map(|(inside, source, mode)| serde_json::json!({"inside": inside, "source": source, "mode": mode}))
            .collect();
        return crate::commands::print_json(ui, &serde_json::Value::Array(items)).map(|()| 0);
    }
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(6);
    let w2 = rows.iter().map(|r| r.2.len()).max().unwrap_or(0).max(4);
    writeln!(
        ui.out(),
        "{BOLD}{:<w0$}  {:<w2$}  SOURCE{RESET}",
        "INSIDE",
        "MODE"
    )?;
    for (inside, source, mode) in rows {
        writeln!(
            ui.out(),
            "{:<w0$}  {:<w2$}  {}",
            shown(&inside),
            shown(&mode),
            shown(&source)
        )?;
    }
    writeln!(
        ui.out(),
        "cwd {} · network {} · mode {} · nothing else of the host exists inside",
        spec.cwd.display(),
        spec.net.name(),
        spec.mode.name()
    )?;
    Ok(0)
}
