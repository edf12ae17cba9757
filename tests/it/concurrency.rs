use std::collections::BTreeSet;
use std::process::Stdio;

use crate::common::TestEnv;

#[test]
fn ten_new_at_once_all_succeed_with_distinct_ids() {
    let env = TestEnv::new();
    let repo = env.repo("app");
    env.run(["init"]).ok();
    let children: Vec<_> = (0..10)
        .map(|i| {
            let mut cmd = env.command();
            cmd.current_dir(&repo)
                .args([
                    "new",
                    if i % 2 == 0 {
                        "same title"
                    } else {
                        "other title"
                    },
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let mut ids = BTreeSet::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ids.insert(String::from_utf8(out.stdout).unwrap().trim().to_string());
    }
    assert_eq!(ids.len(), 10);
    assert_eq!(env.loop_entries().len(), 10, "{:?}", env.loop_entries());
    assert_eq!(
        std::fs::read_dir(env.ws.join("context/repos"))
            .unwrap()
            .count(),
        1
    );
    for id in &ids {
        assert!(env.rev(&repo, &format!("loop/{id}")).is_some());
        assert!(env.rev(&env.notes(), &format!("loop/{id}")).is_some());
    }
    env.git(&repo, ["fsck", "--no-dangling"]);
    env.git(&env.notes(), ["fsck", "--no-dangling"]);
}
