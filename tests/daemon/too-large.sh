#!/usr/bin/env bash
# A pool status the API server refuses as too large (etcd's limit: the real server answers
# 500 "etcdserver: request is too large", as seen on ../shared/k8s at 1.57 MB of status):
# ipam-controller says what to do (split the pool), counts the failed write, and writes
# the status once the server takes it again.
. "$(dirname "$0")/lib.sh"

NS=kube-system
IPPOOLS=/apis/nv-ipam.nvidia.com/v1alpha1/namespaces/$NS/ippools
api_start
api_rules '[{"method": "PATCH", "path": "'$IPPOOLS'/big/status", "times": 2, "action": "status", "code": 500, "message": "etcdserver: request is too large"}]'
api_put /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-a"}}'
api_put "$IPPOOLS" '{"apiVersion":"nv-ipam.nvidia.com/v1alpha1","kind":"IPPool","metadata":{"name":"big","namespace":"'$NS'","uid":"uid-big"},"spec":{"subnet":"10.7.0.0/24","perNodeBlockSize":16}}'

controller_start
placed() { [ "$(api_curl "https://127.0.0.1:$API_PORT/_test/objects?path=$IPPOOLS" | jq -r '.items[0].status.allocations | length')" = 1 ]; }
wait_for 30 placed || true

eq "the status is written once the server takes it" 1 \
	"$(api_curl "https://127.0.0.1:$API_PORT/_test/objects?path=$IPPOOLS" | jq -r '.items[0].status.allocations | length')"
ge "the refusal names the fix: split the pool" 1 \
	"$(grep -c 'the status of 1 allocations ([0-9]* bytes) is larger than the API server stores (HTTP 500: etcdserver: request is too large): split the pool' "$work/controller.log" || true)"
eq "two writes refused, a third taken" 3 "$(api_count "^PATCH $IPPOOLS/big/status")"
summary
