/* SPDX-License-Identifier: GPL-2.0 */
/* classify.c: the wait reason of a sample. */
#ifndef OFFS_CLASSIFY_H
#define OFFS_CLASSIFY_H

#include "offsample.h"

int offs_classify_init(void);
void offs_classify_exit(void);
void offs_classify_flush(void);
void offs_frames_info(const unsigned long *ips, unsigned int depth,
		      struct offs_frames_info *info);
enum offs_reason offs_reason_of(const struct offs_sample *s,
				const struct offs_frames_info *info);

#endif /* OFFS_CLASSIFY_H */
