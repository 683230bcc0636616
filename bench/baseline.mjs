// The baseline for `npm run bench`: a minimal Bolt app written the way Bolt's getting-started
// guide would write it (ack, fetch the service, respond). No validation, escaping, exact
// amounts, access control, retries, deadlines, request coalescing or structured logging.
import bolt from '@slack/bolt';

const { App, LogLevel } = bolt;
const api = process.env.PAYMENT_API_URL;
const headers = { Authorization: `Token ${process.env.PAYMENT_API_KEY}` };

const app = new App({
  token: process.env.SLACK_BOT_TOKEN,
  signingSecret: process.env.SLACK_SIGNING_SECRET,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL },
  logLevel: LogLevel.ERROR,
  // Ready as soon as it listens, answered the way the bot's is, so the benchmark times both
  // from spawn to the first 200 from GET /healthz.
  customRoutes: [
    {
      path: '/healthz',
      method: 'GET',
      handler: (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true }));
      },
    },
  ],
});

app.command('/balance', async ({ ack, respond }) => {
  await ack();
  const response = await fetch(`${api}/api/v2/balance`, { headers });
  const data = await response.json();
  await respond({
    response_type: 'ephemeral',
    text: data.result.map((entry) => `${entry.title}: ${entry.balance} ${entry.id}`).join('\n'),
  });
});

app.command('/invoice', async ({ command, ack, respond }) => {
  await ack();
  const response = await fetch(`${api}/api/v2/invoice/${command.text.trim()}`, { headers });
  const invoice = await response.json();
  await respond({
    response_type: 'in_channel',
    text: `*${invoice.title}*\nStatus: ${invoice.status} (${invoice.payStatus})\nAmount: ${invoice.amount} ${invoice.currency}\n${invoice.link}`,
  });
});

const server = await app.start(Number(process.env.PORT ?? 3000));
console.log(JSON.stringify({ msg: 'bot started', port: server.address().port }));
