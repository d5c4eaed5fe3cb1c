//! Starts `skillc lsp` for .skm files: the `skillc` found on the worktree's PATH (a project's virtual
//! environment when Zed was started from it), or the path in the `lsp.skillc.binary.path` setting.
use zed_extension_api::{self as zed, settings::LspSettings, LanguageServerId, Result};

struct SkillcExtension;

impl zed::Extension for SkillcExtension {
    fn new() -> Self {
        SkillcExtension
    }

    fn language_server_command(&mut self, id: &LanguageServerId, worktree: &zed::Worktree) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(id.as_ref(), worktree).ok().and_then(|s| s.binary);
        let path = binary
            .as_ref()
            .and_then(|b| b.path.clone())
            .or_else(|| worktree.which("skillc"))
            .ok_or_else(|| "skillc is not on PATH: pip install 'skillc[lsp]', or set lsp.skillc.binary.path".to_string())?;
        let args = binary.and_then(|b| b.arguments).unwrap_or_else(|| vec!["lsp".into()]);
        Ok(zed::Command { command: path, args, env: worktree.shell_env() })
    }
}

zed::register_extension!(SkillcExtension);
