#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# opensearch-cluster.sh start|stop|status|url|start-node N|stop-node N
#
# Runs a local two-node OpenSearch 2 cluster (the integ-test-zip
# distribution of scripts/opensearch.sh) on 127.0.0.1, HTTP and transport,
# for freshbench's read-endpoint measurements: an index with one replica has
# a copy on each node, replicated by document or by segment (the index
# setting index.replication.type). Node 1 is the cluster manager (the only
# node that may be), node 2 holds data only, so node 2 can be stopped
# (stop-node 2) and started again (start-node 2) while the cluster goes on.
# start checks that both nodes joined and that an index with one replica
# goes green. `url` prints both nodes' freshbench target URLs,
# comma-separated, node 1 first, e.g.
# opensearch://127.0.0.1:19212/freshbench,opensearch://127.0.0.1:19213/freshbench.
#
# Environment (defaults in brackets):
#   FRESHBENCH_OS_VERSION            [2.19.6]      distribution version
#   FRESHBENCH_OS_CLUSTER_PORTS      [19212 19213] HTTP ports of nodes 1 and 2
#   FRESHBENCH_OS_CLUSTER_TRANSPORTS [19312 19313] their transport ports
#   FRESHBENCH_OS_CLUSTER_HEAP       [384m]        JVM heap of each node
#   FRESHBENCH_OS_INDEX              [freshbench]  index name in the printed URLs
# plus the common knobs described in lib-searchserver.sh (FRESHBENCH_CACHE,
# FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT, FRESHBENCH_KEEP_DATA; data
# is always kept by start-node, and by start while a node runs).
set -euo pipefail

SS_PRODUCT=opensearch
SS_SCHEME=opensearch
SS_GROUP=org.opensearch.distribution.integ-test-zip
SS_VERSION=${FRESHBENCH_OS_VERSION:-2.19.6}
read -r -a SS_NODE_PORTS <<<"${FRESHBENCH_OS_CLUSTER_PORTS:-19212 19213}"
read -r -a SS_NODE_TRANSPORT_PORTS <<<"${FRESHBENCH_OS_CLUSTER_TRANSPORTS:-19312 19313}"
SS_HEAP=${FRESHBENCH_OS_CLUSTER_HEAP:-384m}
SS_INDEX=${FRESHBENCH_OS_INDEX:-freshbench}
SS_JAVA_OPTS_VAR=OPENSEARCH_JAVA_OPTS
SS_JAVA_HOME_VAR=OPENSEARCH_JAVA_HOME
SS_PATH_CONF_VAR=OPENSEARCH_PATH_CONF
SS_MASTER_ROLE=cluster_manager
SS_INITIAL_MASTERS=cluster.initial_cluster_manager_nodes

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_cluster_main "$@"
