// SPDX-License-Identifier: GPL-2.0
/* offsample probe: file_lock_core - file locks' common part, in linux/filelock.h (6.9) */
#if __has_include(<linux/filelock.h>)
#include <linux/filelock.h>
#endif
#include <linux/fs.h>

unsigned char offs_probe(struct file_lock *fl);
unsigned char offs_probe(struct file_lock *fl)
{
	return ((struct file_lock_core *)fl)->flc_type;
}
