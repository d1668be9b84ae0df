# SPDX-License-Identifier: BSD-3-Clause
# Sourced by tests/dataplane/test_e2e.sh, tests/dataplane/test_secure.sh,
# tests/taskfarm/test_taskfarm.sh and bench/peer/slurm-vs-nlevel.sh: the network of one
# appliance. A veth pair VA/VB: VB sits in a new network namespace NS as NET.2/24 (where
# workers and clients use kernel sockets), VA stays here for the appliance's net_af_packet
# port, which answers as NET.1. Needs root.
#
# nl_veth_up NS VA VB NET   make it (NET: the first three octets, e.g. 10.99.0). Status 1
#                           with the reason in NL_VETH_ERR when the namespace or the pair
#                           cannot be made; what was made is removed again.
# nl_veth_down NS VA        remove it; quiet when it is not there.
nl_veth_up() {
	local ns=$1 va=$2 vb=$3 net=$4

	NL_VETH_ERR=
	if ! ip netns add "$ns" 2>/dev/null; then
		NL_VETH_ERR="cannot create a network namespace"
		return 1
	fi
	if ! ip link add "$va" type veth peer name "$vb" 2>/dev/null; then
		ip netns del "$ns"
		NL_VETH_ERR="cannot create a veth pair"
		return 1
	fi
	ip link set "$vb" netns "$ns"
	ip link set "$va" up
	ip netns exec "$ns" ip addr add "$net.2/24" dev "$vb"
	ip netns exec "$ns" ip link set "$vb" up
	ip netns exec "$ns" ip link set lo up
	# full checksums in the frames themselves: af_packet reads them before an offload fills them
	if command -v ethtool >/dev/null; then
		ethtool -K "$va" tx off rx off >/dev/null 2>&1
		ip netns exec "$ns" ethtool -K "$vb" tx off rx off >/dev/null 2>&1
	fi
	# The appliance answers ARP, but a static entry keeps the first frames from waiting on it.
	ip netns exec "$ns" ip neigh replace "$net.1" lladdr "$(cat "/sys/class/net/$va/address")" \
		dev "$vb" nud permanent
}

nl_veth_down() {
	ip link del "$2" 2>/dev/null
	ip netns del "$1" 2>/dev/null
}
