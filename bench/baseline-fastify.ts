// The baseline: a bare Fastify route answering a fixed JSON body, no auth, no database.
import Fastify from 'fastify';

const body = JSON.parse(process.env.BASELINE_BODY ?? '{}');
const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/v2/api-keys/:id', async () => body);
// For the send scenario: parse the JSON body and answer a similar-sized email object.
app.post('/v2/emails', async (request) => ({
  object: 'email',
  id: 'em_2ZWtU0pA7Fq1bQ8TmNBc9yZkXzR',
  received: Object.keys(request.body as object).length,
}));
await app.listen({ host: '127.0.0.1', port: Number(process.env.BASELINE_PORT) });
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
