/*
 * protobuf: request bodies in Kubernetes' protobuf encoding
 * (application/vnd.kubernetes.protobuf), turned into the JSON the rest of
 * the devserver works with.
 *
 * kubectl's generator commands (`kubectl create namespace|configmap|
 * secret|service|priorityclass|job`) use typed clients that send
 * protobuf and accept JSON back; a server that refuses the body breaks
 * them. The wire form is the magic "k8s\0" followed by a runtime.Unknown
 * {typeMeta{apiVersion, kind}, raw} whose raw bytes are the object's
 * generated message. Messages are decoded from static field tables
 * (field number -> JSON name and type) for the kinds the devserver serves
 * and those commands send: Namespace, ConfigMap, Secret, Service, Pod,
 * Event, PriorityClass, Lease, Job (with the pod template), and
 * DeleteOptions. Fields outside the tables are skipped. Zero values that
 * the Go encoder always writes are dropped the way JSON's omitempty
 * drops them, except for pointer fields (e.g. Job spec.suspend), which
 * the encoder only writes when set.
 *
 * Pure; no I/O. Responses are always JSON (clients accept it).
 */
#ifndef DEVSERVER_PROTOBUF_H
#define DEVSERVER_PROTOBUF_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/errors.h"

#define PROTOBUF_CONTENT_TYPE "application/vnd.kubernetes.protobuf"

/* True when body starts with the "k8s\0" magic. */
bool protobuf_is_envelope(const char *body, size_t len);

/*
 * Decodes an enveloped object into JSON with apiVersion and kind set.
 * Returns a new reference, or NULL + err (bad envelope, truncated
 * message, or a kind without a field table).
 */
json_t *protobuf_decode(const char *body, size_t len, struct err *err);

#endif
