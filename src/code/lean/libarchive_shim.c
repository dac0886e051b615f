/*
 * libarchive_shim.c - lets the offline aj link libarchive's pax writer alone.
 *
 * libarchive's pax writer calls one helper that lives in the file holding its
 * table of every output format (archive_write_set_format.c); taking that
 * file from the static archive would bring all of them, and with them
 * lzma, bzip2, libxml2 and nettle. This is that helper, with the same
 * behaviour: an entry of a type the format cannot store is an error. The
 * code archive only ever writes files, directories and symlinks, which pax
 * stores, so it is never reached there.
 */
#include <errno.h>

#include <archive.h>
#include <archive_entry.h>

void __archive_write_entry_filetype_unsupported(struct archive *a,
						struct archive_entry *entry,
						const char *format);

void __archive_write_entry_filetype_unsupported(struct archive *a,
						struct archive_entry *entry,
						const char *format)
{
	archive_set_error(a, EILSEQ, /* libarchive's ARCHIVE_ERRNO_FILE_FORMAT */
			  "%s: unsupported file type for %s", format,
			  archive_entry_pathname(entry));
}
