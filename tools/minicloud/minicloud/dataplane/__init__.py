"""The data plane of minicloud's load balancers: what the amphora is in Octavia.

Per load balancer one HAProxy process on loopback (:mod:`.haproxy`), its configuration rendered
from Octavia's database the way the amphora renders it (:mod:`.model`, :mod:`.render`). Members are
reached at loopback endpoints standing for their addresses (:mod:`.endpoints`): a cluster's
control-plane servers register theirs (:mod:`.apiserver`), any other address is answered by a shared
stand-in. Members' operating_status comes from HAProxy's stats socket (:mod:`.health`), as Octavia's
health manager reads it from the amphora. :mod:`.plane` ties it together inside octavia-api.
"""
