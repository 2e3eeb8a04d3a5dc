//! A run's journal, mirrored to the worker that started it before the run
//! goes on. A worker of `seamark serve` keeps each session's run in the
//! database, not on a disk other machines must share; a record that says a
//! command is about to run must be there before the command runs, or a
//! worker that takes the session over (this one killed) would not know
//! the command may have run, and would run it again.
//!
//! The worker gives its run two pipes, as file descriptors 3 and 4, and
//! names them in [`MIRROR_ENV`]. Every journal line and every file the
//! journal saves (a step's screenshot) goes down the first as a frame; the
//! run waits for the worker's one-byte answer on the second, which comes
//! once the frame is stored. A run started by anyone else has no mirror,
//! and writes its journal as always.
//!
//! A frame: its kind (a byte), the name's length and the data's length
//! (each a little-endian u32), the name, the data.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The variable that names the mirror's descriptors (`3,4`).
pub const MIRROR_ENV: &str = "SEAMARK_JOURNAL_MIRROR";

/// The descriptors a run finds its mirror on: frames out, answers in.
const CHILD_FDS: (RawFd, RawFd) = (3, 4);

/// The largest frame's data (a screenshot is a few hundred KiB).
pub const MAX_FRAME: u32 = 64 << 20;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A journal line (with its newline).
    Line,
    /// A file the journal saved in the run directory.
    File,
}

impl FrameKind {
    fn byte(self) -> u8 {
        match self {
            FrameKind::Line => b'L',
            FrameKind::File => b'F',
        }
    }

    fn of(byte: u8) -> Option<FrameKind> {
        match byte {
            b'L' => Some(FrameKind::Line),
            b'F' => Some(FrameKind::File),
            _ => None,
        }
    }
}

/// One frame, as the worker reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// What it is.
    pub kind: FrameKind,
    /// The file's name in the run directory (empty for a line).
    pub name: String,
    /// The line or the file's bytes.
    pub data: Vec<u8>,
}

/// The run's side: the two pipes, when a worker gave them.
struct RunSide {
    out: std::fs::File,
    answers: std::fs::File,
}

static RUN_SIDE: OnceLock<Option<Mutex<RunSide>>> = OnceLock::new();

/// Takes the mirror a worker gave this process, if it gave one: called
/// once at the start, before any browser is launched, so that the
/// descriptors are closed on exec (no program this run starts holds them).
pub fn take_from_env() {
    RUN_SIDE.get_or_init(|| {
        let named = std::env::var(MIRROR_ENV).ok()?;
        // Only what a worker sets: the two descriptors it puts there.
        if named != format!("{},{}", CHILD_FDS.0, CHILD_FDS.1) {
            return None;
        }
        let is_pipe = |fd: RawFd| {
            // SAFETY: fstat on a descriptor number into a zeroed struct.
            unsafe {
                let mut st: libc::stat = std::mem::zeroed();
                libc::fstat(fd, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO
            }
        };
        if !is_pipe(CHILD_FDS.0) || !is_pipe(CHILD_FDS.1) {
            return None;
        }
        for fd in [CHILD_FDS.0, CHILD_FDS.1] {
            // SAFETY: sets close-on-exec on a descriptor this process owns.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        // SAFETY: the worker put these two pipes here for this process
        // alone, and nothing else in it takes them.
        let (out, answers) = unsafe {
            (
                std::fs::File::from_raw_fd(CHILD_FDS.0),
                std::fs::File::from_raw_fd(CHILD_FDS.1),
            )
        };
        Some(Mutex::new(RunSide { out, answers }))
    });
}

/// Hands a frame to the worker and waits until it is stored. Nothing to
/// do when no worker mirrors this run.
pub fn send(kind: FrameKind, name: &str, data: &[u8]) -> std::io::Result<()> {
    let Some(Some(side)) = RUN_SIDE.get() else {
        return Ok(());
    };
    let mut side = side.lock().unwrap_or_else(PoisonError::into_inner);
    let (name_len, data_len) = (
        u32::try_from(name.len()).map_err(std::io::Error::other)?,
        u32::try_from(data.len()).map_err(std::io::Error::other)?,
    );
    if data_len > MAX_FRAME {
        return Err(std::io::Error::other(format!(
            "{name}: {data_len} bytes is more than the mirror takes"
        )));
    }
    let mut head = Vec::with_capacity(9 + name.len());
    head.push(kind.byte());
    head.extend_from_slice(&name_len.to_le_bytes());
    head.extend_from_slice(&data_len.to_le_bytes());
    head.extend_from_slice(name.as_bytes());
    side.out.write_all(&head)?;
    side.out.write_all(data)?;
    side.out.flush()?;
    let mut answer = [0u8; 1];
    side.answers.read_exact(&mut answer)?;
    if answer[0] == 1 {
        Ok(())
    } else {
        Err(std::io::Error::other(
            "the worker could not store it in the session database",
        ))
    }
}

/// The worker's side of a mirror: frames in, answers out.
pub struct WorkerSide {
    frames: tokio::net::unix::pipe::Receiver,
    answers: tokio::net::unix::pipe::Sender,
}

/// The run's ends of a mirror, until the run is started with them.
pub struct RunEnds {
    out: OwnedFd,
    answers: OwnedFd,
}

/// A new mirror: the worker's side, and the ends its run gets.
pub fn pipes() -> std::io::Result<(WorkerSide, RunEnds)> {
    let (frames_read, frames_write) = pipe()?;
    let (answers_read, answers_write) = pipe()?;
    let side = WorkerSide {
        frames: tokio::net::unix::pipe::Receiver::from_owned_fd(frames_read)?,
        answers: tokio::net::unix::pipe::Sender::from_owned_fd(answers_write)?,
    };
    Ok((
        side,
        RunEnds {
            out: frames_write,
            answers: answers_read,
        },
    ))
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills two descriptors this process then owns.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just made, and are owned here alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl RunEnds {
    /// Gives the run these ends as descriptors 3 and 4, and names them.
    /// The ends are this process's until `command` is spawned, and must be
    /// dropped after (so the worker sees the mirror end with the run).
    pub fn give_to(&self, command: &mut tokio::process::Command) {
        let (out, answers) = (self.out.as_raw_fd(), self.answers.as_raw_fd());
        command.env(MIRROR_ENV, format!("{},{}", CHILD_FDS.0, CHILD_FDS.1));
        // SAFETY: between fork and exec only fcntl and dup2 are called,
        // which are async-signal-safe. Each end is first copied above the
        // two numbers (so that neither is overwritten by the other's dup2
        // when the pipes happen to be 3 and 4); dup2 leaves 3 and 4 open
        // across exec, the copies close there.
        unsafe {
            command.pre_exec(move || {
                let high = |fd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
                let (out, answers) = (high(out), high(answers));
                if out < 0
                    || answers < 0
                    || libc::dup2(out, CHILD_FDS.0) < 0
                    || libc::dup2(answers, CHILD_FDS.1) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

impl WorkerSide {
    /// The next frame, or None when the run closed its end (it exited).
    pub async fn next(&mut self) -> std::io::Result<Option<Frame>> {
        use tokio::io::AsyncReadExt;
        let mut head = [0u8; 9];
        match self.frames.read_exact(&mut head).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let kind = FrameKind::of(head[0])
            .ok_or_else(|| std::io::Error::other(format!("no frame kind {:?}", head[0])))?;
        let name_len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
        let data_len = u32::from_le_bytes([head[5], head[6], head[7], head[8]]);
        if name_len > 4096 || data_len > MAX_FRAME {
            return Err(std::io::Error::other("a frame past the mirror's bounds"));
        }
        let mut name = vec![0u8; name_len as usize];
        self.frames.read_exact(&mut name).await?;
        let mut data = vec![0u8; data_len as usize];
        self.frames.read_exact(&mut data).await?;
        Ok(Some(Frame {
            kind,
            name: String::from_utf8_lossy(&name).into_owned(),
            data,
        }))
    }

    /// Tells the run whether its frame was stored.
    pub async fn answer(&mut self, stored: bool) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt;
        self.answers.write_all(&[u8::from(stored)]).await
    }
}
