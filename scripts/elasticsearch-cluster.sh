#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# elasticsearch-cluster.sh start|stop|status|url|start-node N|stop-node N
#
# Runs a local two-node Elasticsearch cluster (the integ-test-zip
# distribution of scripts/elasticsearch.sh) on 127.0.0.1, HTTP and
# transport, for freshbench's read-endpoint measurements: an index with one
# replica has a copy on each node. Node 1 is the master (the only node that
# may be), node 2 holds data only, so node 2 can be stopped (stop-node 2)
# and started again (start-node 2) while the cluster goes on. start checks
# that both nodes joined and that an index with one replica goes green.
# `url` prints both nodes' freshbench target URLs, comma-separated, node 1
# first, e.g.
# elasticsearch://127.0.0.1:19210/freshbench,elasticsearch://127.0.0.1:19211/freshbench.
#
# Environment (defaults in brackets):
#   FRESHBENCH_ES_VERSION            [8.19.21]     distribution version
#   FRESHBENCH_ES_CLUSTER_PORTS      [19210 19211] HTTP ports of nodes 1 and 2
#   FRESHBENCH_ES_CLUSTER_TRANSPORTS [19310 19311] their transport ports
#   FRESHBENCH_ES_CLUSTER_HEAP       [384m]        JVM heap of each node
#   FRESHBENCH_ES_INDEX              [freshbench]  index name in the printed URLs
# plus the common knobs described in lib-searchserver.sh (FRESHBENCH_CACHE,
# FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT, FRESHBENCH_KEEP_DATA; data
# is always kept by start-node, and by start while a node runs).
set -euo pipefail

SS_PRODUCT=elasticsearch
SS_SCHEME=elasticsearch
SS_GROUP=org.elasticsearch.distribution.integ-test-zip
SS_VERSION=${FRESHBENCH_ES_VERSION:-8.19.21}
read -r -a SS_NODE_PORTS <<<"${FRESHBENCH_ES_CLUSTER_PORTS:-19210 19211}"
read -r -a SS_NODE_TRANSPORT_PORTS <<<"${FRESHBENCH_ES_CLUSTER_TRANSPORTS:-19310 19311}"
SS_HEAP=${FRESHBENCH_ES_CLUSTER_HEAP:-384m}
SS_INDEX=${FRESHBENCH_ES_INDEX:-freshbench}
SS_JAVA_OPTS_VAR=ES_JAVA_OPTS
SS_JAVA_HOME_VAR=ES_JAVA_HOME
SS_PATH_CONF_VAR=ES_PATH_CONF
SS_MASTER_ROLE=master
SS_INITIAL_MASTERS=cluster.initial_master_nodes
# As in elasticsearch.sh: no TLS and passwords on a loopback-only server.
SS_EXTRA_CONFIG='xpack.security.enabled: false'

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_cluster_main "$@"
