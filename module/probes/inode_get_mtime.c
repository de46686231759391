// SPDX-License-Identifier: GPL-2.0
/* offsample probe: inode_get_mtime - timestamp accessors (6.7) */
#include <linux/fs.h>

time64_t offs_probe(struct inode *inode);
time64_t offs_probe(struct inode *inode)
{
	return inode_get_mtime(inode).tv_sec;
}
