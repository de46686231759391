In file included from <built-in>:4:
In file included from /virtual/include/bcc/helpers.h:53:
In file included from include/linux/log2.h:12:
...
lines: 122
