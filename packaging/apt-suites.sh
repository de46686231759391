#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel packages of Debian suites other than the system's, without
# touching the system's apt: a private apt configuration for bullseye, the
# package a meta-package points to, and unpacking header packages with
# their compiler.  Sourced by packaging/matrix.sh (make matrix) and
# tests/vm/test-matrix.sh (make test-matrix); they set CACHE and log().

# Private apt configuration for bullseye (lists, cache, sources of its own).
BAPT=$CACHE/apt-bullseye
bapt_opts=(-o "Dir::Etc::SourceList=$BAPT/sources.list"
	-o "Dir::Etc::SourceParts=$BAPT/sources.list.d"
	-o "Dir::Etc::Preferences=$BAPT/preferences"
	-o "Dir::Etc::PreferencesParts=$BAPT/preferences.d"
	-o "Dir::State::Lists=$BAPT/lists" -o "Dir::Cache=$BAPT/cache"
	-o "Dir::State::status=$BAPT/status"
	-o "APT::Get::List-Cleanup=0")
bullseye_apt_setup() {
	mkdir -p "$BAPT/sources.list.d" "$BAPT/preferences.d" "$BAPT/lists/partial" \
		"$BAPT/cache/archives/partial"
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	cat > "$BAPT/sources.list" <<EOF
deb [signed-by=$key] http://deb.debian.org/debian bullseye main
deb [signed-by=$key] http://deb.debian.org/debian bullseye-updates main
deb [signed-by=$key] http://deb.debian.org/debian-security bullseye-security main
EOF
	: > "$BAPT/preferences"
	# An empty package database of its own: bookworm's installed packages
	# must not hide bullseye's versions (nothing is installed from here).
	[ -f "$BAPT/status" ] || : > "$BAPT/status"
	# Refresh the lists at most once a day.
	if [ -z "$(find "$BAPT/lists" -maxdepth 1 -name '*Packages*' -mtime -1 2>/dev/null | head -n1)" ]; then
		log "matrix: apt-get update (bullseye, private configuration in $BAPT)"
		apt-get "${bapt_opts[@]}" update -qq </dev/null >&2 || return 1
	fi
}

# apt_cmd SUITE apt-get|apt-cache ARGS...
apt_cmd() {
	local suite=$1 tool=$2
	shift 2
	if [ "$suite" = bullseye ]; then
		"$tool" "${bapt_opts[@]}" "$@"
	else
		"$tool" "$@"
	fi
}

# The package a meta-package points to (first Depends matching RE).
dep_of() {	# SUITE PACKAGE REGEX
	apt_cmd "$1" apt-cache depends "$2" 2>/dev/null |
		sed -n 's/^ *|\{0,1\}Depends: *//p' | grep -E "$3" | sort -V | tail -n1
}

# Unpack PACKAGE and its linux-headers/linux-kbuild/gcc dependencies into
# ROOT (download only; nothing is installed).
unpack() {	# SUITE ROOT PACKAGE...
	local suite=$1 root=$2 p d
	shift 2
	local todo=("$@") seen=" " debs=$CACHE/matrix/debs-$suite
	# Header and kbuild packages; the compiler too where the system's is
	# not the one the headers want (bullseye: gcc-10).
	local want='^(linux-headers-|linux-kbuild-)'
	[ "$suite" = bookworm ] ||
		want='^(linux-headers-|linux-kbuild-|linux-compiler-|gcc-[0-9]+$|cpp-[0-9]+$|gcc-[0-9]+-base$|libgcc-[0-9]+-dev$)'

	mkdir -p "$debs" "$root"
	while [ ${#todo[@]} -gt 0 ]; do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		case "$seen" in *" $p "*) continue ;; esac
		seen="$seen$p "
		for d in $(apt_cmd "$suite" apt-cache depends "$p" 2>/dev/null |
			sed -n 's/^ *|\{0,1\}Depends: *//p' | grep -E "$want" |
			grep -v -- '-unsigned$'); do
			todo+=("$d")
		done
		[ -f "$root/.unpacked-$p" ] && continue
		if [ ! -f "$debs/$p.deb" ]; then
			(cd "$debs" && apt_cmd "$suite" apt-get -o APT::Sandbox::User=root \
				download -qq "$p" </dev/null >&2) || return 1
			mv "$debs/${p}_"*.deb "$debs/$p.deb" 2>/dev/null || true
		fi
		dpkg -x "$debs/$p.deb" "$root" && touch "$root/.unpacked-$p" || return 1
	done
	# Debian's flavour Makefile includes the common one by absolute path.
	local mk
	for mk in "$root"/usr/src/linux-headers-*/Makefile; do
		sed -i "s|^include /usr/src/|include $root/usr/src/|" "$mk"
	done
}

