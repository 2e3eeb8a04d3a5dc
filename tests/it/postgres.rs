//! A PostgreSQL server of the test's own: Debian's `postgresql` package
//! (`scripts/setup.sh` installs it), a cluster made in a temporary folder,
//! listening on a free port of 127.0.0.1, ended with the test (and with the
//! test binary: its parent-death signal). PostgreSQL refuses to run as
//! root, so as root it runs as the package's `postgres` user.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// A running PostgreSQL, until dropped.
pub struct Postgres {
    /// `postgres://seamark@127.0.0.1:PORT/postgres`.
    pub url: String,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // SIGQUIT: the immediate shutdown, no waiting for clients.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGQUIT);
        }
        let _ = self.child.wait();
    }
}

/// The folder of the newest PostgreSQL's programs.
fn bin_dir() -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is installed (scripts/setup.sh installs Debian's postgresql)")
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("postgres").exists())
        .collect();
    found.sort();
    found
        .pop()
        .expect("a PostgreSQL server under /usr/lib/postgresql/*/bin")
}

/// The command, run as the `postgres` user when this is root.
fn as_owner(program: PathBuf, root: bool) -> std::process::Command {
    if !root {
        return std::process::Command::new(program);
    }
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args([
        "--reuid=postgres",
        "--regid=postgres",
        "--init-groups",
        "--pdeathsig=KILL",
        "--",
    ])
    .arg(program);
    cmd
}

impl Postgres {
    /// Makes a cluster and starts it; returns once it takes connections.
    pub async fn start() -> Postgres {
        let bin = bin_dir();
        let dir = tempfile::tempdir().expect("a temp dir");
        let data = dir.path().join("data");
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            let owner = std::process::Command::new("id")
                .args(["-u", "postgres"])
                .output()
                .expect("id -u postgres");
            let uid: u32 = String::from_utf8_lossy(&owner.stdout)
                .trim()
                .parse()
                .expect("the postgres user (Debian's postgresql package makes it)");
            std::os::unix::fs::chown(dir.path(), Some(uid), None).expect("chown");
        }
        let made = as_owner(bin.join("initdb"), root)
            .args(["-A", "trust", "-U", "seamark", "--no-sync", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .output()
            .expect("initdb");
        assert!(
            made.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().unwrap().port()
        };
        let child = as_owner(bin.join("postgres"), root)
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string(), "-k"])
            .arg(dir.path())
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=100",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start postgres");
        let url = format!("postgres://seamark@127.0.0.1:{port}/postgres");
        let pg = Postgres {
            url,
            child,
            _dir: dir,
        };
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
                && seamark::coworker::Store::open(&pg.url).await.is_ok()
            {
                return pg;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("PostgreSQL did not take connections within 20 s");
    }
}
