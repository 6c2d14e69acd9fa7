"""Channels to an alsim server: TLS, mutual TLS and bearer tokens.

``alsim.channel(address, ...)`` returns a ``grpc.Channel`` for the raw stubs
(``alsim.v1.alsim_pb2_grpc.SimulatorStub``), and ``alsim.VectorEnv`` takes the same keyword
arguments. The token, when there is one, goes with every call made through the channel, streams
(StreamStates, StepStream) included, as the metadata ``authorization: Bearer TOKEN``.

    import alsim
    from alsim.v1 import alsim_pb2, alsim_pb2_grpc

    with alsim.channel("server.example:50051", tls_ca="ca.pem", token_file="token") as ch:
        stub = alsim_pb2_grpc.SimulatorStub(ch)
        print(stub.ServerInfo(alsim_pb2.ServerInfoRequest(), timeout=5))

Every argument left as None is read from the environment, as the ``alsim`` CLI reads it (an empty
variable counts as unset):

==================  =========================  ==================================================
argument            environment variable       meaning
==================  =========================  ==================================================
``tls``             ``ALSIM_TLS`` (1 or 0)     TLS with gRPC's default root certificates
``tls_ca``          ``ALSIM_TLS_CA``           CA certificates (PEM) that verify the server
``tls_server_name`` ``ALSIM_TLS_SERVER_NAME``  the name the server's certificate must carry
``tls_cert``        ``ALSIM_TLS_CLIENT_CERT``  mutual TLS: this client's certificate chain (PEM)
``tls_key``         ``ALSIM_TLS_CLIENT_KEY``   mutual TLS: this client's private key (PEM)
``token``           ``ALSIM_TOKEN``            bearer token of a server with --auth-tokens
``token_file``      ``ALSIM_TOKEN_FILE``       a file holding the token
==================  =========================  ==================================================

(Not ``ALSIM_TLS_CERT``/``ALSIM_TLS_KEY``: alsim-server reads those for its own certificate.)
Python standard library and grpc only.
"""

import os
import re

import grpc

__all__ = ["channel", "connection_settings", "ENVIRONMENT"]

# Argument -> the environment variable that supplies it when the argument is None.
ENVIRONMENT = {
    "tls": "ALSIM_TLS",
    "tls_ca": "ALSIM_TLS_CA",
    "tls_server_name": "ALSIM_TLS_SERVER_NAME",
    "tls_cert": "ALSIM_TLS_CLIENT_CERT",
    "tls_key": "ALSIM_TLS_CLIENT_KEY",
    "token": "ALSIM_TOKEN",
    "token_file": "ALSIM_TOKEN_FILE",
}

# HTTP/2 header values: printable ASCII; no spaces, as in the server's "TOKEN TENANT" lines.
_TOKEN = re.compile(r"[!-~]+\Z")
_PEM_BEGIN = b"-----BEGIN "
_TRUE = ("1", "true", "on", "yes")
_FALSE = ("", "0", "false", "off", "no")


def _environment(name):
    value = os.environ.get(name)
    return value if value else None


def _switch(value, source):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("%s %r is not 1 or 0 (true/false, on/off, yes/no)" % (source, value))


def _pem(value, what):
    """PEM bytes from a path (str or os.PathLike) or from the PEM contents themselves (bytes)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data, where = bytes(value), what
    else:
        path = os.fspath(value)
        with open(path, "rb") as f:
            data = f.read()
        where = "%s %s" % (what, path)
    if _PEM_BEGIN not in data:
        raise ValueError("%s is not PEM (no '-----BEGIN ...' line)" % where)
    return data


def _check_token(token, where):
    if not isinstance(token, str):
        raise TypeError("%s must be a str, not %r" % (where, type(token).__name__))
    if not _TOKEN.match(token):
        raise ValueError("%s must be printable ASCII without spaces or control characters" % where)
    return token


def _read_token_file(path):
    path = os.fspath(path)
    with open(path, "r", encoding="ascii", errors="replace") as f:
        token = f.read().strip()
    if not token:
        raise ValueError("the token file %s is empty" % path)
    return _check_token(token, "the token in %s" % path)


def connection_settings(tls=None, tls_ca=None, tls_cert=None, tls_key=None, tls_server_name=None,
                        token=None, token_file=None):
    """The resolved settings of ``channel``: a dict with ``tls`` (bool), ``root_certificates``,
    ``certificate_chain``, ``private_key`` (PEM bytes or None), ``server_name`` and ``token``
    (str or None). Files are read here; raises ValueError (or OSError for unreadable files)
    naming the argument or variable at fault."""
    explicit_tls = {"tls_ca": tls_ca, "tls_cert": tls_cert, "tls_key": tls_key,
                    "tls_server_name": tls_server_name}
    if tls is False:
        # Plain TCP: the TLS variables are ignored, TLS arguments contradict it.
        given = [name for name, value in explicit_tls.items() if value]
        if given:
            raise ValueError("tls=False contradicts %s" % ", ".join(given))
    else:
        if tls is None:
            tls = _switch(_environment(ENVIRONMENT["tls"]) or "", "$" + ENVIRONMENT["tls"])
        if tls_ca is None:
            tls_ca = _environment(ENVIRONMENT["tls_ca"])
        if tls_server_name is None:
            tls_server_name = _environment(ENVIRONMENT["tls_server_name"])
        if tls_cert is None and tls_key is None:
            tls_cert = _environment(ENVIRONMENT["tls_cert"])
            tls_key = _environment(ENVIRONMENT["tls_key"])
    if bool(tls_cert) != bool(tls_key):
        raise ValueError("mutual TLS needs both tls_cert and tls_key ($%s and $%s), not one"
                         % (ENVIRONMENT["tls_cert"], ENVIRONMENT["tls_key"]))

    if token is not None and token_file is not None:
        raise ValueError("give token or token_file, not both")
    if token is None and token_file is None:
        token = _environment(ENVIRONMENT["token"])
        token_file = _environment(ENVIRONMENT["token_file"])
        if token is not None and token_file is not None:
            raise ValueError("set $%s or $%s, not both" % (ENVIRONMENT["token"],
                                                           ENVIRONMENT["token_file"]))
    if token_file is not None:
        token = _read_token_file(token_file)
    elif token:  # "" is no token (and overrides the environment)
        _check_token(token, "the token")
    else:
        token = None

    settings = {
        "tls": bool(tls or tls_ca or tls_cert or tls_server_name),
        "root_certificates": _pem(tls_ca, "tls_ca") if tls_ca else None,
        "certificate_chain": _pem(tls_cert, "tls_cert") if tls_cert else None,
        "private_key": _pem(tls_key, "tls_key") if tls_key else None,
        "server_name": tls_server_name or None,
        "token": token,
    }
    return settings


class _CallDetails(grpc.ClientCallDetails):
    def __init__(self, details, metadata):
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class _BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                   grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds 'authorization: Bearer TOKEN' to every call of a plain-TCP channel (gRPC sends call
    credentials over TLS only)."""

    def __init__(self, token):
        self._header = ("authorization", "Bearer " + token)

    def _details(self, details):
        metadata = [m for m in (details.metadata or ()) if m[0] != "authorization"]
        metadata.append(self._header)
        return _CallDetails(details, metadata)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation, details, request_iterator):
        return continuation(self._details(details), request_iterator)

    def intercept_stream_stream(self, continuation, details, request_iterator):
        return continuation(self._details(details), request_iterator)


def channel(address, tls=None, tls_ca=None, tls_cert=None, tls_key=None, tls_server_name=None,
            token=None, token_file=None, max_message_bytes=64 << 20, options=()):
    """A ``grpc.Channel`` to the alsim server at ``address`` (``host:port`` or ``unix:PATH``).

    Args:
        tls: True for TLS even without the arguments below (gRPC's default root certificates
            verify the server); False for plain TCP whatever the environment says. Any of
            ``tls_ca``, ``tls_cert``, ``tls_server_name`` implies TLS.
        tls_ca: the CA certificates (PEM) that verify the server's certificate: a path, or the
            PEM contents as bytes.
        tls_cert, tls_key: mutual TLS (a server with --tls-client-ca): this client's certificate
            chain and private key (PEM paths or bytes), both or neither.
        tls_server_name: the name the server's certificate must carry when it is not the host of
            ``address`` (a certificate for "localhost" reached at 127.0.0.1, say).
        token: the bearer token of a server with --auth-tokens, sent on every call ("" for none,
            overriding $ALSIM_TOKEN). Without TLS it travels in clear text.
        token_file: a file holding the token (surrounding whitespace is dropped).
        max_message_bytes: the send and receive message size limit.
        options: more gRPC channel arguments, e.g. ``(("grpc.http2.bdp_probe", 0),
            ("grpc.http2.lookahead_bytes", 65536))`` for a StreamStates viewer.

    Arguments left None come from the environment (see the module's documentation). Raises
    ValueError or OSError for unusable settings; connection failures (a TLS server reached
    without TLS, an unverifiable certificate, a missing client certificate) surface on the first
    call as ``grpc.StatusCode.UNAVAILABLE``, a missing or unknown token as UNAUTHENTICATED.
    """
    settings = connection_settings(tls=tls, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                                   tls_server_name=tls_server_name, token=token,
                                   token_file=token_file)
    arguments = [("grpc.max_send_message_length", int(max_message_bytes)),
                 ("grpc.max_receive_message_length", int(max_message_bytes))]
    arguments += list(options)
    token = settings["token"]
    if not settings["tls"]:
        plain = grpc.insecure_channel(address, options=arguments)
        return grpc.intercept_channel(plain, _BearerToken(token)) if token else plain
    if settings["server_name"]:
        arguments.append(("grpc.ssl_target_name_override", settings["server_name"]))
    credentials = grpc.ssl_channel_credentials(
        root_certificates=settings["root_certificates"], private_key=settings["private_key"],
        certificate_chain=settings["certificate_chain"])
    if token:
        credentials = grpc.composite_channel_credentials(
            credentials, grpc.access_token_call_credentials(token))
    return grpc.secure_channel(address, credentials, options=arguments)
