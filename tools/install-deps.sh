#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what nlevel needs from Debian 12's archive (as root, or with sudo). Idempotent: does
# nothing when everything is already installed. One package per line, alphabetical.
set -euo pipefail
pkgs=(
	clang
	curl
	debhelper
	dpdk
	dpkg-dev
	ethtool
	gnuplot-nox
	help2man
	iproute2
	libbenchmark-dev
	libclang-rt-14-dev
	libdpdk-dev
	libinih-dev
	libjansson-dev
	libjemalloc-dev
	libmicrohttpd-dev
	libpcre2-dev
	libsodium-dev
	libsqlite3-dev
	libsystemd-dev
	liburcu-dev
	meson
	ninja-build
	pkg-config
	prometheus
	python3
	systemd
	tzdata
	zlib1g-dev
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >&2
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
