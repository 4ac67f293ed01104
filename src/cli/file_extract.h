/* `ri file extract`: a workspace tree copied to the host. */
#ifndef RI_CLI_FILE_EXTRACT_H
#define RI_CLI_FILE_EXTRACT_H

struct wsfs;

/* Copies what guest names (a directory: its contents; a file: the file) into the host
 * directory dest (created if missing): directories, files (each written atomically) and
 * symlinks as symlinks (never followed, on either side). Existing host files of the same
 * names are replaced; nothing else in dest is touched. A host directory component that is
 * a symlink is refused, so that nothing is written outside dest. RI_EXIT_OK or the exit
 * status after a message; image names the source in messages. */
int ri_file_extract(const char *cmd, const struct wsfs *fs, const char *image, const char *guest, const char *dest);

#endif
