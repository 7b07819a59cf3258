//! The cache against real files in a temporary state directory.

use std::os::unix::fs::PermissionsExt;
use std::sync::{Arc, Barrier};

use super::*;

const RULES: &str = r#"[[rule]]
id = "deploy.prod"
action = "ask"
pattern = '^make\s+deploy\b'
unless = '--dry-run'
reason = "Deploys to production."

[[allow]]
pattern = '^make deploy-docs$'
context = "any"
"#;

/// A cache in a fresh temporary state directory.
fn cache() -> (tempfile::TempDir, Cache, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("state").join(DIR);
    (root, Cache::at(dir.clone()), dir)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|l| l.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "bin")).collect())
        .unwrap_or_default();
    out.sort();
    out
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// Loads `text` and says whether the cache answered (a hit leaves every pattern uncompiled).
fn load(cache: &Cache, text: &str) -> (FileItems, bool) {
    let items = cache.load("rules.toml", text, Layer::User).unwrap();
    let hit = !items.rules[0].pattern.is_ready();
    (items, hit)
}

#[test]
fn a_miss_writes_a_private_entry_the_next_load_reads() {
    let (_root, cache, dir) = cache();
    let (first, hit) = load(&cache, RULES);
    assert!(!hit);
    let [entry] = &entries(&dir)[..] else { panic!("one entry: {:?}", entries(&dir)) };
    assert_eq!((mode(entry), mode(&dir), mode(dir.parent().unwrap())), (0o600, 0o700, 0o700));
    let written = std::fs::read(entry).unwrap();
    let (second, hit) = load(&cache, RULES);
    assert!(hit);
    assert_eq!(codec::encode(&second), codec::encode(&first));
    assert_eq!(second.rules[0].origin.to_string(), "rules.toml:2");
    assert_eq!(std::fs::read(entry).unwrap(), written, "a hit does not write");
    // The uncompiled patterns judge as the compiled ones do.
    for text in ["make deploy", "make deploy --dry-run", "make test"] {
        let fires = |items: &FileItems| items.rules[0].fires(text, None);
        assert_eq!(fires(&second), fires(&first), "{text}");
    }
    assert!(second.allows[0].covers("make deploy-docs") && !second.allows[0].covers("make deploy"));
}

#[test]
fn a_damaged_entry_is_ignored_and_rewritten() {
    let (_root, cache, dir) = cache();
    load(&cache, RULES);
    let entry = entries(&dir).pop().unwrap();
    let good = std::fs::read(&entry).unwrap();
    load(&cache, &format!("{RULES}# another file\n"));
    let other = entries(&dir).into_iter().find(|e| *e != entry).unwrap();
    let flip = |at: usize| {
        let mut b = good.clone();
        b[at] ^= 1;
        b
    };
    let damages: [(&str, Vec<u8>); 8] = [
        ("a payload byte", flip(good.len() - 1)),
        ("the checksum", flip(HEADER - 1)),
        ("the key", flip(12)),
        ("the format", flip(8)),
        ("the magic", flip(0)),
        ("cut in half", good[..good.len() / 2].to_vec()),
        ("cut in the header", good[..HEADER - 1].to_vec()),
        ("another file's entry", std::fs::read(&other).unwrap()),
    ];
    for (what, bytes) in damages {
        std::fs::write(&entry, &bytes).unwrap();
        let (items, hit) = load(&cache, RULES);
        assert!(!hit, "{what}: read as a hit");
        assert_eq!(items.rules[0].id, "deploy.prod");
        assert_eq!(std::fs::read(&entry).unwrap(), good, "{what}: not rewritten");
        assert!(load(&cache, RULES).1, "{what}: the rewritten entry is not read");
    }
    // An entry others may read or write is not read either.
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(!load(&cache, RULES).1);
    assert_eq!(mode(&entry), 0o600);
    // Nor is a symbolic link, even to a good entry.
    let copy = dir.join("copy");
    std::fs::rename(&entry, &copy).unwrap();
    std::os::unix::fs::symlink(&copy, &entry).unwrap();
    assert!(!load(&cache, RULES).1);
    assert!(!std::fs::symlink_metadata(&entry).unwrap().file_type().is_symlink());
}

#[test]
fn a_changed_file_misses() {
    let (_root, cache, dir) = cache();
    load(&cache, RULES);
    let changed = RULES.replace("deploy\\b", "deploy\\s");
    let (items, hit) = load(&cache, &changed);
    assert!(!hit);
    assert_eq!(items.rules[0].pattern.source, r"^make\s+deploy\s");
    assert_eq!(entries(&dir).len(), 2);
    assert_eq!(load(&cache, &changed).0.rules[0].pattern.source, r"^make\s+deploy\s");
}

#[test]
fn an_invalid_file_is_never_cached() {
    let (_root, cache, dir) = cache();
    for bad in [RULES.replace("deploy\\b", "(deploy"), RULES.replace("any", "nowhere "), "[[rule]]\n".into()] {
        let direct = compile::parse_file("rules.toml", &bad, Layer::User).err().unwrap().to_string();
        for _ in 0..2 {
            let cached = cache.load("rules.toml", &bad, Layer::User).err().unwrap().to_string();
            assert_eq!(cached, direct);
        }
    }
    assert!(entries(&dir).is_empty());
}

#[test]
fn a_cache_that_cannot_be_written_only_costs_a_full_load() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("state"), "not a directory").unwrap();
    let cache = Cache::at(root.path().join("state").join(DIR));
    assert!(!load(&cache, RULES).1);
    assert!(!load(&cache, RULES).1);
}

#[test]
fn the_directory_keeps_the_most_recently_used_entries() {
    let (_root, cache, dir) = cache();
    let old = SystemTime::now() - Duration::from_secs(7200);
    let age = |path: &Path| std::fs::metadata(path).unwrap().modified().unwrap();
    let text = |i: usize| format!("{RULES}# file {i}\n");
    let dead = dir.join(".x.bin.1.dead.tmp");
    let live = dir.join(".x.bin.2.beef.tmp");
    for i in 0..MAX_ENTRIES + 8 {
        load(&cache, &text(i));
        if i == 0 {
            // The first entry, not read for two hours, is read now: that marks it used.
            let first = entries(&dir).pop().unwrap();
            File::options().write(true).open(&first).unwrap().set_modified(old).unwrap();
            assert!(load(&cache, &text(0)).1);
            assert!(age(&first) > old + Duration::from_secs(3600));
            // The next one is left old, and is pruned first.
            load(&cache, &text(1000));
            let second = entries(&dir).into_iter().find(|e| *e != first).unwrap();
            File::options().write(true).open(&second).unwrap().set_modified(old).unwrap();
            std::fs::write(&dead, "").unwrap();
            File::options().write(true).open(&dead).unwrap().set_modified(old).unwrap();
            std::fs::write(&live, "").unwrap();
        }
    }
    assert_eq!(entries(&dir).len(), MAX_ENTRIES);
    assert!(load(&cache, &text(MAX_ENTRIES + 7)).1, "the newest entry was pruned");
    assert!(!load(&cache, &text(1000)).1, "the entry left old was kept");
    assert!(!dead.exists() && live.exists(), "a dead writer's file is removed, a live one's kept");
}

#[test]
fn concurrent_loads_of_one_file_leave_one_whole_entry() {
    let (_root, cache, dir) = cache();
    let cache = Arc::new(cache);
    let start = Arc::new(Barrier::new(8));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (cache, start) = (Arc::clone(&cache), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                (0..10).map(|_| load(&cache, RULES).0.rules.len()).sum::<usize>()
            })
        })
        .collect();
    assert!(threads.into_iter().all(|t| t.join().unwrap() == 10));
    assert_eq!(entries(&dir).len(), 1);
    assert!(load(&cache, RULES).1);
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
