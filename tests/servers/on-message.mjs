// on-message.mjs — lets a test server see each inbound message before the SDK handles it (through the
// public Transport interface), e.g. to grow its tool list after the first tools/list.
export function onMessage(server, look) {
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    await connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      look(message);
      deliver?.(message, extra);
    };
  };
}
