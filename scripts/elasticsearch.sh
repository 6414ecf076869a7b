#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# elasticsearch.sh start|stop|restart|status|url
#
# Runs a local single-node Elasticsearch (the integ-test-zip distribution,
# fetched with Maven) on 127.0.0.1 for freshbench's benchmarks and tests.
# `url` prints the freshbench target URL, e.g. elasticsearch://127.0.0.1:19200/freshbench.
#
# Environment (defaults in brackets):
#   FRESHBENCH_ES_VERSION        [8.19.21] distribution version
#   FRESHBENCH_ES_PORT           [19200]   HTTP port
#   FRESHBENCH_ES_TRANSPORT_PORT [19300]   transport port
#   FRESHBENCH_ES_HEAP           [1g]      JVM heap (-Xms and -Xmx)
#   FRESHBENCH_ES_INDEX          [freshbench] index name in the printed URL
# plus the common knobs described in lib-searchserver.sh (FRESHBENCH_CACHE,
# FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT, FRESHBENCH_KEEP_DATA).
set -euo pipefail

SS_PRODUCT=elasticsearch
SS_SCHEME=elasticsearch
SS_GROUP=org.elasticsearch.distribution.integ-test-zip
SS_VERSION=${FRESHBENCH_ES_VERSION:-8.19.21}
SS_PORT=${FRESHBENCH_ES_PORT:-19200}
SS_TRANSPORT_PORT=${FRESHBENCH_ES_TRANSPORT_PORT:-19300}
SS_HEAP=${FRESHBENCH_ES_HEAP:-1g}
SS_INDEX=${FRESHBENCH_ES_INDEX:-freshbench}
SS_JAVA_OPTS_VAR=ES_JAVA_OPTS
SS_JAVA_HOME_VAR=ES_JAVA_HOME
SS_PATH_CONF_VAR=ES_PATH_CONF
# The 8.x distribution ships the security module, which would otherwise turn
# on TLS and passwords at first start; this is a loopback-only test server.
SS_EXTRA_CONFIG='xpack.security.enabled: false'

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_main "$@"
