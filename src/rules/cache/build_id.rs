//! The running binary's build id: the hash the linker writes into a GNU build-id note, computed
//! over the whole binary (`build.rs` asks for it), so any change to cmdguard's code, its rules
//! compiler or a dependency gives another id. It is read from the program's headers in memory:
//! no file is opened.

/// The build id, or `None` where the binary has none (then the rules cache is off).
#[cfg(target_os = "linux")]
pub fn get() -> Option<&'static [u8]> {
    let mut found: Option<&'static [u8]> = None;
    // SAFETY: the callback reads only what glibc passes it and writes `found`, which outlives the
    // call.
    unsafe { libc::dl_iterate_phdr(Some(program_note), (&raw mut found).cast()) };
    found
}

#[cfg(not(target_os = "linux"))]
pub fn get() -> Option<&'static [u8]> {
    None
}

/// `dl_iterate_phdr`'s callback: looks through the first object, which is the program itself,
/// for its build-id note, and stops there.
#[cfg(target_os = "linux")]
unsafe extern "C" fn program_note(info: *mut libc::dl_phdr_info, _size: usize, data: *mut libc::c_void) -> libc::c_int {
    // SAFETY: glibc passes a valid `dl_phdr_info` whose program headers stay mapped while the
    // program runs, and `data` is the `Option` `get` passed.
    let (info, found) = unsafe { (&*info, &mut *data.cast::<Option<&'static [u8]>>()) };
    // SAFETY: `dlpi_phdr` points to `dlpi_phnum` program headers.
    let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
    for h in headers.iter().filter(|h| h.p_type == libc::PT_NOTE) {
        let start = (info.dlpi_addr as usize).wrapping_add(h.p_vaddr as usize) as *const u8;
        // SAFETY: a loaded PT_NOTE segment is mapped at its address for `p_memsz` bytes, for as
        // long as the program runs (the program is never unloaded).
        let notes: &'static [u8] = unsafe { std::slice::from_raw_parts(start, h.p_memsz as usize) };
        if let Some(id) = gnu_build_id(notes, if h.p_align == 8 { 8 } else { 4 }) {
            *found = Some(id);
            break;
        }
    }
    1
}

/// The descriptor of the `NT_GNU_BUILD_ID` note among `notes`, laid out as glibc reads them
/// (each 12-byte header, name and descriptor padded to `align`).
fn gnu_build_id(mut notes: &[u8], align: usize) -> Option<&[u8]> {
    const NT_GNU_BUILD_ID: usize = 3;
    let pad = |n: usize| n.checked_next_multiple_of(align);
    while notes.len() >= 12 {
        let word = |at: usize| u32::from_ne_bytes([notes[at], notes[at + 1], notes[at + 2], notes[at + 3]]) as usize;
        let (name_len, desc_len, kind) = (word(0), word(4), word(8));
        let desc_start = pad(12usize.checked_add(name_len)?)?;
        let desc_end = desc_start.checked_add(desc_len)?;
        let (name, desc) = (notes.get(12..12 + name_len)?, notes.get(desc_start..desc_end)?);
        if kind == NT_GNU_BUILD_ID && name == b"GNU\0" && !desc.is_empty() {
            return Some(desc);
        }
        notes = notes.get(pad(desc_end)?.min(notes.len())..)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_id_note_is_found_among_others() {
        let note = |kind: u32, name: &[u8], desc: &[u8]| {
            let mut n = Vec::new();
            for w in [name.len() as u32, desc.len() as u32, kind] {
                n.extend_from_slice(&w.to_ne_bytes());
            }
            n.extend_from_slice(name);
            n.resize(n.len().next_multiple_of(4), 0);
            n.extend_from_slice(desc);
            n.resize(n.len().next_multiple_of(4), 0);
            n
        };
        let mut notes = note(1, b"GNU\0", &[0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
        notes.extend(note(3, b"Go\0\0", b"not this one"));
        notes.extend(note(3, b"GNU\0", &[0xab; 20]));
        assert_eq!(gnu_build_id(&notes, 4), Some(&[0xab; 20][..]));
        assert_eq!(gnu_build_id(&notes[..notes.len() - 1], 4), None);
        assert_eq!(gnu_build_id(&note(3, b"GNU\0", &[]), 4), None);
        let mut huge = note(3, b"GNU\0", &[1]);
        huge[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
        assert_eq!(gnu_build_id(&huge, 4), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_binary_has_a_build_id() {
        let id = get().expect("build.rs links with --build-id");
        assert!(id.len() >= 8, "{id:?}");
    }
}
