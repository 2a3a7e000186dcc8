// mcp_loopback.cjs - preloaded (node --require) into
// @modelcontextprotocol/server-everything's Streamable HTTP server by
// t_mcp.sh: the server calls app.listen(PORT) without a host, which binds
// every interface; every server a test starts must listen on the loopback
// only, so a listen() given a port and no host gets 127.0.0.1.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
    const port = args[0];
    if ((typeof port === 'number' || /^[0-9]+$/.test(String(port))) &&
        typeof args[1] !== 'string') {
        args[0] = Number(port);
        args.splice(1, 0, '127.0.0.1');
    }
    return listen.apply(this, args);
};
