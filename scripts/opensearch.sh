#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# opensearch.sh start|stop|restart|status|url
#
# Runs a local single-node OpenSearch (the integ-test-zip distribution,
# fetched with Maven) on 127.0.0.1 for freshbench's benchmarks and tests.
# `url` prints the freshbench target URL, e.g. opensearch://127.0.0.1:19201/freshbench.
#
# Environment (defaults in brackets):
#   FRESHBENCH_OS_VERSION        [2.19.6] distribution version
#   FRESHBENCH_OS_PORT           [19201]  HTTP port
#   FRESHBENCH_OS_TRANSPORT_PORT [19301]  transport port
#   FRESHBENCH_OS_HEAP           [1g]     JVM heap (-Xms and -Xmx)
#   FRESHBENCH_OS_INDEX          [freshbench] index name in the printed URL
# plus the common knobs described in lib-searchserver.sh (FRESHBENCH_CACHE,
# FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT, FRESHBENCH_KEEP_DATA).
set -euo pipefail

SS_PRODUCT=opensearch
SS_SCHEME=opensearch
SS_GROUP=org.opensearch.distribution.integ-test-zip
SS_VERSION=${FRESHBENCH_OS_VERSION:-2.19.6}
SS_PORT=${FRESHBENCH_OS_PORT:-19201}
SS_TRANSPORT_PORT=${FRESHBENCH_OS_TRANSPORT_PORT:-19301}
SS_HEAP=${FRESHBENCH_OS_HEAP:-1g}
SS_INDEX=${FRESHBENCH_OS_INDEX:-freshbench}
SS_JAVA_OPTS_VAR=OPENSEARCH_JAVA_OPTS
SS_JAVA_HOME_VAR=OPENSEARCH_JAVA_HOME
SS_PATH_CONF_VAR=OPENSEARCH_PATH_CONF

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_main "$@"
