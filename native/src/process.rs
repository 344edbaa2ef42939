//! The last word of a process that DuckDB aborts: a C++ `std::terminate` (seen when a lake's
//! catalog connection breaks mid-statement) raises SIGABRT, which would kill the process with
//! no line and a status the caller cannot tell from a crash. `exit_on_abort` installs a
//! SIGABRT handler that writes a prepared line to stderr and exits with a prepared status; the
//! handler does nothing but `write` and `_exit`, both async-signal-safe.

use std::sync::OnceLock;

/// The line (with its newline) and the exit status of the installed handler.
static LAST_WORD: OnceLock<(Vec<u8>, i32)> = OnceLock::new();

/// Status of an abort before any line was prepared: what the shell reports for SIGABRT.
const ABORTED: i32 = 128 + libc::SIGABRT;

extern "C" fn on_abort(_signal: libc::c_int) {
    let (line, code) = match LAST_WORD.get() {
        Some((line, code)) => (line.as_slice(), *code),
        None => (&[][..], ABORTED),
    };
    // SAFETY: `write` and `_exit` are async-signal-safe; `line` is a static buffer.
    unsafe {
        libc::write(2, line.as_ptr().cast(), line.len());
        libc::_exit(code);
    }
}

/// From now on, an abort of this process writes `message` (and a newline) to stderr and exits
/// with `code`. The first message given stays; installing again only renews the handler.
pub fn exit_on_abort(message: &str, code: i32) -> Result<(), String> {
    let mut line = message.as_bytes().to_vec();
    line.push(b'\n');
    let _ = LAST_WORD.set((line, code));
    // SAFETY: a zeroed `sigaction` is a valid empty action; its fields are set before use.
    let installed = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_abort as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGABRT, &action, std::ptr::null_mut())
    };
    if installed != 0 {
        return Err(format!(
            "cannot install the SIGABRT handler: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_line_stays_and_the_handler_installs() {
        assert!(exit_on_abort("first", 4).is_ok());
        assert!(exit_on_abort("second", 5).is_ok());
        let (line, code) = LAST_WORD.get().expect("a line");
        assert_eq!((line.as_slice(), *code), (&b"first\n"[..], 4));
    }
}
