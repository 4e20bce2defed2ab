/* gst-cudaconvolve: a fuzzer's target run once on each input given, for
 * builds without libFuzzer (gcc, the GPU host) and for the seed corpus in
 * the tests:
 *
 *   fuzz-NAME-replay FILE-OR-FOLDER...
 *
 * A folder stands for the files in it, in name order.  Exits 1 when none
 * was found; a crash or a sanitizer's report ends it as it would the
 * fuzzer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"

static gint
compare_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const gchar * const *) a, *(const gchar * const *) b);
}

/* The files path stands for, appended to files. */
static void
add_inputs (GPtrArray * files, const gchar * path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  GPtrArray *names;
  const gchar *name;
  guint i;

  if (!dir) {
    g_ptr_array_add (files, g_strdup (path));
    return;
  }
  names = g_ptr_array_new_with_free_func (g_free);
  while ((name = g_dir_read_name (dir)))
    if (name[0] != '.')
      g_ptr_array_add (names, g_build_filename (path, name, NULL));
  g_dir_close (dir);
  g_ptr_array_sort (names, compare_names);
  for (i = 0; i < names->len; i++)
    g_ptr_array_add (files, g_strdup (g_ptr_array_index (names, i)));
  g_ptr_array_unref (names);
}

int
main (int argc, char **argv)
{
  GPtrArray *files = g_ptr_array_new_with_free_func (g_free);
  gint i;
  guint k;

  LLVMFuzzerInitialize (&argc, &argv);
  for (i = 1; i < argc; i++)
    add_inputs (files, argv[i]);
  for (k = 0; k < files->len; k++) {
    const gchar *path = g_ptr_array_index (files, k);
    gchar *data;
    gsize size;

    if (!g_file_get_contents (path, &data, &size, NULL)) {
      g_printerr ("cannot read %s\n", path);
      return 1;
    }
    LLVMFuzzerTestOneInput ((const guint8 *) data, size);
    g_free (data);
  }
  g_print ("%u inputs replayed\n", files->len);
  g_ptr_array_unref (files);
  return k == 0 ? 1 : 0;
}
