//! cmdguard's private state directory (`~/.local/state/cmdguard` on Linux): session grants,
//! trust records and the audit log. The directory is 0700 and every file 0600. Files are
//! replaced by atomic rename under an exclusive lock on a sibling `.lock` file, so concurrent
//! cmdguard processes never lose or mix each other's writes, and a crash leaves either the old
//! file or the new one, never half of one.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// The state directory, created private if it does not exist yet.
pub fn dir() -> Result<PathBuf> {
    let dir = dir_path()?;
    private_dir(&dir)?;
    Ok(dir)
}

/// Where the state directory is, without creating or changing it (`cmdguard doctor` inspects it).
pub fn dir_path() -> Result<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "cmdguard")
        .context("cannot find a home directory for cmdguard's state (is HOME set?)")?;
    Ok(dirs.state_dir().unwrap_or_else(|| dirs.data_local_dir()).to_path_buf())
}

/// A subdirectory of the state directory, created private.
pub fn subdir(name: &str) -> Result<PathBuf> {
    let dir = dir()?.join(name);
    private_dir(&dir)?;
    Ok(dir)
}

/// Creates `dir` (and missing parents) and makes it 0700. A directory owned by someone else is
/// refused: its owner could read or forge grants.
pub fn private_dir(dir: &Path) -> Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", dir.display())),
    }
    let meta = std::fs::metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    if !meta.is_dir() {
        bail!("{} should be cmdguard's state directory but is not a directory", dir.display());
    }
    // SAFETY: geteuid has no preconditions.
    if meta.uid() != unsafe { libc::geteuid() } {
        bail!("{} belongs to another user; cmdguard keeps its state only in a directory you own", dir.display());
    }
    if meta.mode() & 0o777 != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("cannot make {} private (0700)", dir.display()))?;
    }
    Ok(())
}

/// An exclusive lock, held until the returned file is dropped.
pub fn lock(path: &Path) -> Result<File> {
    let file = open_private(path, false)?;
    file.lock().with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(file)
}

/// Opens (creating 0600) a file for reading and writing, or reading and appending.
pub fn open_private(path: &Path, append: bool) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(!append)
        .append(append)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}

/// Creates `path` (which must not exist) with exactly `mode`, holding `bytes`, flushed to disk
/// if `durable`.
fn create_file(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).create_new(true).mode(mode).custom_flags(libc::O_CLOEXEC).open(path)?;
    // The umask may have narrowed `mode`; a file meant to be read by others must be readable.
    f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    f.write_all(bytes)?;
    if durable { f.sync_all() } else { Ok(()) }
}

/// A complete copy of `bytes` in a new temporary file next to `path`.
fn temp_copy(path: &Path, bytes: &[u8], mode: u32) -> Result<PathBuf> {
    temp_file(path, bytes, mode, true)
}

fn temp_file(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> Result<PathBuf> {
    let dir = path.parent().context("a file to write needs a directory")?;
    let name = path.file_name().context("a file to write needs a name")?.to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), random_hex(4)));
    if let Err(e) = create_file(&tmp, bytes, mode, durable) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", tmp.display()));
    }
    Ok(tmp)
}

/// Replaces `path` with `bytes` atomically: a private temporary file in the same directory,
/// flushed to disk, then renamed over `path`. Callers hold the lock that guards `path`.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let tmp = temp_copy(path, bytes, mode)?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot replace {}", path.display()));
    }
    // The rename itself is durable once the directory is flushed.
    if let Some(Ok(d)) = path.parent().map(File::open) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Replaces `path` with a private (0600) file holding `bytes`, by rename, without flushing: for
/// a file that may be lost or cut short in a crash because its reader verifies it (a cache),
/// where two flushes to disk would cost more than the file saves.
pub fn write_replaceable(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_file(path, bytes, 0o600, false)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::Error::new(e).context(format!("cannot replace {}", path.display()))
    })
}

/// Creates `path` holding `bytes` unless it exists; returns whether this call created it. The
/// temporary copy is linked into place: link(2) fails if the name exists, so of several writers
/// exactly one wins, and no reader sees half a file. (On a file system without hard links the
/// file is created in place, still never replacing one.)
pub fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<bool> {
    let tmp = temp_copy(path, bytes, mode)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(_) => match create_file(path, bytes, mode, true) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot write {}", path.display())),
        },
    }
}

/// Reads a file, or `None` if it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Lower-case hex SHA-256 of the concatenated parts.
pub fn sha256_hex(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    hex(&h.finalize())
}

/// How a session key is stored and shown: it is hashed, never written in clear.
pub fn key_hash(key: &str) -> String {
    sha256_hex(&[b"cmdguard session key\0", key.as_bytes()])
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `n` random bytes from the kernel, as hex.
pub fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    // SAFETY: the buffer is valid for `n` bytes; getrandom fills at most that many.
    let got = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), n, 0) };
    if usize::try_from(got).ok() != Some(n) {
        // getrandom(2) does not fail for small requests on a running system; if it ever does,
        // nothing that depends on unpredictability may go on.
        panic!("the kernel's random source failed: {}", std::io::Error::last_os_error());
    }
    hex(&buf)
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `secs` since the epoch as an RFC 3339 UTC time (`2026-12-01T13:40:00Z`).
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `YYYY-MM-DDTHH:MM:SSZ` (or a plain date) to seconds since the epoch.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let (date, time) = text.split_once(['T', ' ']).unwrap_or((text, "00:00:00Z"));
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let time = time.strip_suffix('Z').unwrap_or(time);
    let mut t = time.split(':').map(|p| p.parse::<u64>().ok());
    let (hh, mm, ss) = (t.next()??, t.next().flatten().unwrap_or(0), t.next().flatten().unwrap_or(0));
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from civil date (inverse of rfc3339).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days).ok().map(|d| d * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Parses `90`, `90s`, `15m`, `8h`, `2d` or a sum like `1h30m` into seconds.
pub fn parse_duration(text: &str) -> Option<u64> {
    let text = text.trim();
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    let (mut total, mut num, mut any) = (0u64, String::new(), false);
    for c in text.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        let n: u64 = num.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        num.clear();
        any = true;
    }
    (num.is_empty() && any).then_some(total)
}

/// Parses a size: a number of bytes, or `512MiB`, `2 GiB`, `100MB`, `1G` (a bare `K`, `M`,
/// `G`, `T` is binary, as `du` and `ls -h` mean it).
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (num, unit) = text.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000_u64.pow(2),
        "gb" => 1000_u64.pow(3),
        "tb" => 1000_u64.pow(4),
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// A size as a setting is written back: `512 MiB`, `2 GiB`, `1500 bytes`.
pub fn human_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// A short human duration: `45s`, `12m`, `3h 5m`, `2d 4h`.
pub fn human_duration(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86_400 if secs % 3600 >= 60 => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
        3600..86_400 => format!("{}h", secs / 3600),
        _ => format!("{}d {}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_durations() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_796_132_096), "2026-12-01T13:34:56Z");
        assert_eq!(parse_duration("120"), Some(120));
        assert_eq!(parse_duration("8h"), Some(28_800));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("2d"), Some(172_800));
        assert_eq!(parse_size("512MiB"), Some(512 << 20));
        assert_eq!(parse_size("2 GiB"), Some(2 << 30));
        assert_eq!(parse_size("100MB"), Some(100_000_000));
        assert_eq!(parse_size("1500"), Some(1500));
        assert_eq!(parse_size("12 parsecs"), None);
        assert_eq!(human_size(512 << 20), "512 MiB");
        assert_eq!(human_size(1500), "1500 bytes");
        assert_eq!(parse_duration("h"), None);
        assert_eq!(parse_duration("5x"), None);
        assert_eq!(parse_duration("10m5"), None);
        assert_eq!(human_duration(59), "59s");
        assert_eq!(human_duration(3_660), "1h 1m");
        assert_eq!(human_duration(90_000), "1d 1h");
    }

    #[test]
    fn key_hashes_differ_per_key_and_hide_it() {
        let a = key_hash("s-A");
        assert_eq!(a.len(), 64);
        assert_ne!(a, key_hash("s-B"));
        assert!(!a.contains("s-A"));
        assert_eq!(random_hex(16).len(), 32);
        assert_ne!(random_hex(16), random_hex(16));
    }
}
