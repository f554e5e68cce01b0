"""Definitions shared by every kind: ObjectMeta, ListMeta, Status, DeleteOptions, Condition...

Named as kube-apiserver names them (``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta``), with
descriptions of our own.
"""

from __future__ import annotations

from minicloud.kube.openapi.builders import (
    CORE,
    META,
    array,
    boolean,
    date_time,
    free,
    integer,
    obj,
    ref,
    string,
    string_map,
    strings,
)

OWNER_REFERENCE = obj(
    "Names an object this one belongs to; the garbage collector deletes this object once every owner is gone.",
    ("apiVersion", "kind", "name", "uid"),
    apiVersion=string("API version of the owner."),
    blockOwnerDeletion=boolean("If true, the owner cannot be deleted (foreground deletion) before this object."),
    controller=boolean("If true, the owner is the managing controller of this object (at most one)."),
    kind=string("Kind of the owner."),
    name=string("Name of the owner."),
    uid=string("UID of the owner."),
)

OBJECT_META = obj(
    "Metadata every persisted object has: identity, labels, annotations, owners and the server's bookkeeping.",
    annotations=string_map("Unstructured key-value data set by tools and controllers; not used to select objects."),
    creationTimestamp=ref(META + "Time", "When the server created the object (set by the server, read-only)."),
    deletionGracePeriodSeconds=integer("Seconds the object is allowed to terminate gracefully (read-only).",
                                       "int64"),
    deletionTimestamp=ref(META + "Time", "When deletion was requested; the object stays while finalizers are "
                                         "left (set by the server, read-only)."),
    finalizers=strings("Names of controllers that must act before the object is removed from storage."),
    generateName=string("Prefix of a name the server completes with a random suffix when no name is given."),
    generation=integer("Sequence number of the desired state; bumped by the server when the spec changes.",
                       "int64"),
    labels=string_map("Key-value pairs used to organize and select objects."),
    managedFields=array(ref(META + "ManagedFieldsEntry"), "Which manager set which fields (server-side apply)."),
    name=string("Unique name within a namespace (or the cluster, for cluster-scoped kinds); cannot be changed."),
    namespace=string("The namespace the object lives in; empty for cluster-scoped kinds."),
    ownerReferences=array(ref(META + "OwnerReference"), "Objects this one depends on."),
    resourceVersion=string("Opaque version of the object, for optimistic concurrency and watches (read-only)."),
    selfLink=string("Deprecated, never set."),
    uid=string("Unique id of this incarnation of the object, set by the server (read-only)."),
)

MANAGED_FIELDS_ENTRY = obj(
    "A manager's field set and the operation that wrote it.",
    apiVersion=string("Version of the fields' schema."),
    fieldsType=string("Format of fieldsV1; always FieldsV1."),
    fieldsV1=free("The set of fields, in a trie encoding."),
    manager=string("Who manages these fields."),
    operation=string("Apply or Update."),
    subresource=string("The subresource the fields were written through, if any."),
    time=ref(META + "Time", "When the fields were last written."),
)

LIST_META = obj(
    "Metadata of a list: its resourceVersion and the token of the next page.",
    **{"continue": string("Opaque token for the next page; empty on the last one."),
       "remainingItemCount": integer("How many items follow this page (an estimate).", "int64"),
       "resourceVersion": string("Version of the list, for watches and consistent reads."),
       "selfLink": string("Deprecated, never set.")},
)

STATUS_CAUSE = obj(
    "One reason for an error.",
    field=string("The field that caused the error, as a path (spec.replicas)."),
    message=string("Human-readable explanation."),
    reason=string("Machine-readable reason (FieldValueRequired...)."),
)

STATUS_DETAILS = obj(
    "What an error is about.",
    causes=array(ref(META + "StatusCause"), "The individual causes."),
    group=string("API group of the resource."),
    kind=string("The resource (plural) or kind."),
    name=string("Name of the object."),
    retryAfterSeconds=integer("Seconds to wait before retrying."),
    uid=string("UID of the object."),
)

STATUS = obj(
    "The answer of calls that return no object, and of every error.",
    apiVersion=string("Always v1."),
    code=integer("HTTP status code."),
    details=ref(META + "StatusDetails", "What the error is about."),
    kind=string("Always Status."),
    message=string("Human-readable description."),
    metadata=ref(META + "ListMeta", "Standard list metadata."),
    reason=string("Machine-readable reason (NotFound, Conflict, Invalid...)."),
    status=string("Success or Failure."),
)

PRECONDITIONS = obj(
    "Conditions the object must meet for the operation to proceed.",
    resourceVersion=string("The object's resourceVersion must be this one."),
    uid=string("The object's UID must be this one."),
)

DELETE_OPTIONS = obj(
    "Options of a delete request.",
    apiVersion=string("Versioned schema of this object."),
    dryRun=strings("All: process the request without persisting it."),
    gracePeriodSeconds=integer("Seconds before the object is deleted.", "int64"),
    kind=string("Always DeleteOptions."),
    orphanDependents=boolean("Deprecated: use propagationPolicy."),
    preconditions=ref(META + "Preconditions", "Must be met before deleting."),
    propagationPolicy=string("Orphan, Background or Foreground: what happens to dependents."),
)

CONDITION = obj(
    "One aspect of an object's current state (Ready, Available, Paused...).",
    ("lastTransitionTime", "message", "reason", "status", "type"),
    lastTransitionTime=date_time("When the status last changed."),
    message=string("Human-readable details."),
    observedGeneration=integer("The metadata.generation the condition was computed for.", "int64"),
    reason=string("CamelCase reason of the last transition."),
    status=string("True, False or Unknown."),
    type=string("The aspect, in CamelCase."),
)

OBJECT_REFERENCE = obj(
    "Points to another object.",
    apiVersion=string("API version of the referent."),
    fieldPath=string("A part of the referent (spec.containers{name}), if the reference is to a part."),
    kind=string("Kind of the referent."),
    name=string("Name of the referent."),
    namespace=string("Namespace of the referent."),
    resourceVersion=string("The referent's resourceVersion this reference was made at."),
    uid=string("UID of the referent."),
)

DEFINITIONS: dict[str, dict] = {
    META + "ObjectMeta": OBJECT_META,
    META + "OwnerReference": OWNER_REFERENCE,
    META + "ManagedFieldsEntry": MANAGED_FIELDS_ENTRY,
    META + "ListMeta": LIST_META,
    META + "Status": STATUS,
    META + "StatusDetails": STATUS_DETAILS,
    META + "StatusCause": STATUS_CAUSE,
    META + "DeleteOptions": DELETE_OPTIONS,
    META + "Preconditions": PRECONDITIONS,
    META + "Condition": CONDITION,
    META + "Time": string("A moment, RFC 3339 in UTC, to the second.", "date-time"),
    META + "MicroTime": string("A moment, RFC 3339 in UTC, to the microsecond.", "date-time"),
    META + "Patch": {"type": "object", "description": "A patch body: JSON patch, JSON merge patch, strategic merge "
                                                      "patch or an apply configuration."},
    CORE + "ObjectReference": OBJECT_REFERENCE,
}
