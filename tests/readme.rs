//! The README's five-minute path, run as written: every `sh` block between the
//! `newcomer` markers goes through bash against a fresh server, and every
//! `# ->` line must appear in that block's output.
// A test fails loudly: an unwrap here is an assertion.
#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::apps;

struct Block {
    script: String,
    expected: Vec<String>,
}

fn newcomer_blocks(readme: &str, base: &str) -> Vec<Block> {
    let start = readme.find("<!-- newcomer:start -->").expect("start marker");
    let end = readme.find("<!-- newcomer:end -->").expect("end marker");
    let section = &readme[start..end].replace("http://localhost:8080", base);
    let mut blocks = Vec::new();
    let mut rest = section.as_str();
    while let Some(open) = rest.find("```sh\n") {
        let body = &rest[open + 6..];
        let close = body.find("```").expect("closed code block");
        let script = body[..close].to_owned();
        let expected = script.lines().filter_map(|line| line.trim().strip_prefix("# -> ")).map(str::to_owned).collect();
        blocks.push(Block { script, expected });
        rest = &body[close + 3..];
    }
    blocks
}

#[tokio::test]
async fn the_newcomer_path_works_as_written() {
    if Command::new("curl").arg("--version").output().is_err() {
        eprintln!("SKIPPED: the README test needs curl");
        return;
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for app in apps().await {
        let blocks = newcomer_blocks(&readme, &app.base);
        assert!(blocks.len() >= 8, "the path has its steps");
        // One shell, so variables set in one block carry into the next, as in a terminal.
        let script: String = blocks
            .iter()
            .enumerate()
            .map(|(index, block)| format!("echo '@@block {index}'\n{}\n", block.script))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().to_owned();
        // Off the runtime's thread: the server under test runs on it.
        let run = tokio::task::spawn_blocking(move || {
            Command::new("bash").args(["-euo", "pipefail", "-c", &script]).current_dir(cwd).output().expect("bash")
        })
        .await
        .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
        assert!(run.status.success(), "a README command failed:\n{stdout}\n{}", String::from_utf8_lossy(&run.stderr));
        for (index, block) in blocks.iter().enumerate() {
            let output = stdout.split(&format!("@@block {index}\n")).nth(1).unwrap_or_default();
            let output = output.split("@@block ").next().unwrap_or_default();
            for expected in &block.expected {
                assert!(
                    output.contains(expected.as_str()),
                    "block {index} should print {expected}, printed:\n{output}"
                );
            }
        }
        app.state.writer.flush().await;
        let visitor = app.visitor(1, "visitor-1").await;
        assert_eq!(visitor.status, "identified");
        assert_eq!(app.clicks().await.len(), 1, "the click was recorded");
    }
}
