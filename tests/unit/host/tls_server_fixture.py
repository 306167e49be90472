#!/usr/bin/python3
"""An HTTPS server on 127.0.0.1 for the TLS tests: argv = certfile keyfile
[client-ca]. Prints its port on stdout, then answers every GET with 200 and
JSON naming what it saw: the SNI name, the Host and Authorization headers and
the client certificate's CN (asked for, optionally, when client-ca is given).
"""
import http.server
import json
import ssl
import sys

seen_sni = {}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        cert = self.connection.getpeercert()
        cn = None
        if cert:
            for rdn in cert.get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        cn = v
        body = json.dumps({"sni": seen_sni.get("name"), "host": self.headers.get("Host"),
                           "authorization": self.headers.get("Authorization"), "client_cn": cn}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
if len(sys.argv) > 3:
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.load_verify_locations(sys.argv[3])


def on_sni(sock, name, context):
    seen_sni["name"] = name


ctx.sni_callback = on_sni
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
