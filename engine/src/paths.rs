//! From a plan's `file_path` (an absolute path or a `file://` URI) to a path, as text only. Resolving
//! it on disk (`real_path`) and confining it (`Folders`) do I/O and live in the `multiedit` crate.

use std::path::PathBuf;

use crate::engine::Refusal;

pub fn to_path(file_path: &str) -> Result<PathBuf, Refusal> {
    let Some(rest) = file_path.strip_prefix("file://") else {
        return Ok(PathBuf::from(file_path));
    };
    // `file:///abs` or `file://localhost/abs`; any other host is not a local file.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return Err(Refusal::invalid(format!(
            "`file_path` {file_path} names a file on another host; only local file:// URIs can be edited"
        ))
        .in_file(file_path));
    }
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| {
            Refusal::invalid(format!(
                "`file_path` {file_path} has percent-escapes that are not UTF-8"
            ))
            .in_file(file_path)
        })?;
    if decoded.contains('\0') {
        return Err(
            Refusal::invalid(format!("`file_path` {file_path} contains a NUL character"))
                .in_file(file_path),
        );
    }
    Ok(PathBuf::from(decoded.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_paths() {
        assert_eq!(to_path("/a/b c.txt").unwrap(), PathBuf::from("/a/b c.txt"));
        assert_eq!(
            to_path("file:///a/b%20c%C3%A9.txt").unwrap(),
            PathBuf::from("/a/b cé.txt")
        );
        assert_eq!(to_path("file://localhost/x").unwrap(), PathBuf::from("/x"));
        assert!(to_path("file://server/share/x").is_err());
        assert!(to_path("file:///a%00b").is_err());
    }
}
