//! `config set` and `config unset`: one key of one layer, checked before anything is written.

use super::*;

pub(super) fn set(
    ui: &mut Ui,
    ws: &Workspace,
    key: &str,
    value: &str,
    target: &Target,
) -> Result<u8> {
    edit::known(key)?;
    let (layer, path) = target_file(ws, target)?;
    let operator = HostPaths::from_env()?.operator_config;
    // Everything is checked before anything is written.
    let value = edit::checked_value(ws, layer, &operator, key, value)?;
    if let Some(q) = &target.r#loop {
        let id = loops::resolve(ws, q)?;
        let mut rec = loops::load(ws, &id)?;
        schema::set(&mut rec.config, key, value);
        rec.write(&path)?;
    } else {
        edit::set_in_file(&path, key, &value, layer != Layer::Operator)?;
    }
    ui.status(format!(
        "set {key} in the {layer} config ({})",
        path.display()
    ))?;
    if layer == Layer::Team {
        ui.status("commit it in the knowledge repository to share it with the team")?;
    }
    Ok(0)
}

pub(super) fn unset(ui: &mut Ui, ws: &Workspace, key: &str, target: &Target) -> Result<u8> {
    edit::known(key)?;
    let (layer, path) = target_file(ws, target)?;
    let removed = if let Some(q) = &target.r#loop {
        let id = loops::resolve(ws, q)?;
        let mut rec = loops::load(ws, &id)?;
        let removed = schema::remove(&mut rec.config, key);
        if removed {
            rec.write(&path)?;
        }
        removed
    } else {
        edit::unset_in_file(&path, key, layer != Layer::Operator)?
    };
    if !removed {
        ui.status(format!("{key} was not set in the {layer} config"))?;
    }
    Ok(0)
}

fn target_file(ws: &Workspace, t: &Target) -> Result<(Layer, PathBuf)> {
    if t.operator {
        return Ok((Layer::Operator, HostPaths::from_env()?.operator_config));
    }
    if t.team {
        return Ok((Layer::Team, ws.team_config()));
    }
    if let Some(q) = &t.r#loop {
        let id = loops::resolve(ws, q)?;
        return Ok((Layer::Loop, ws.loop_record(&id)));
    }
    Ok((Layer::Personal, ws.personal_config()))
}
