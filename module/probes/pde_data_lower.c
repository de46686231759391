// SPDX-License-Identifier: GPL-2.0
/* offsample probe: pde_data - PDE_DATA() renamed (5.17) */
#include <linux/proc_fs.h>

void *offs_probe(const struct inode *inode);
void *offs_probe(const struct inode *inode)
{
	return pde_data(inode);
}
