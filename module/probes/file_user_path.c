// SPDX-License-Identifier: GPL-2.0
/* offsample probe: file_user_path - the user-visible path of a backing file (6.8) */
#include <linux/fs.h>

const struct path *offs_probe(struct file *f);
const struct path *offs_probe(struct file *f)
{
	return file_user_path(f);
}
