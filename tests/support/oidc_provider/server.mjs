// A real OpenID Connect provider (panva's certified oidc-provider) for the single sign-on
// tests, on loopback. Its own minimal sign-in page (no external fonts or scripts): a login
// field (the account's name) and a "Refuse" link that answers the client with
// error=access_denied. Consent is given at once. Configuration from the environment:
//   PORT, CLIENT_ID, CLIENT_SECRET, REDIRECT_URIS (comma-separated),
//   ACCOUNTS: {"name": {"email": "...", "name": "...", "groups": ["..."]}, ...}
import http from "node:http";
import { Provider } from "oidc-provider";

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;
const accounts = JSON.parse(process.env.ACCOUNTS || "{}");

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: process.env.CLIENT_ID,
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: process.env.REDIRECT_URIS.split(","),
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    },
  ],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name", "preferred_username"],
    groups: ["groups"],
  },
  scopes: ["openid", "email", "profile", "groups"],
  cookies: { keys: ["test-only-cookie-key"] },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true },
  async findAccount(ctx, id) {
    const account = accounts[id];
    if (!account) {
      return undefined;
    }
    return {
      accountId: id,
      async claims() {
        return { sub: id, preferred_username: id, email_verified: true, ...account };
      },
    };
  },
});

const escape = (text) =>
  String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res, body) {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!DOCTYPE html><html><head><title>Test identity provider</title></head>
<body><h1>Test identity provider</h1>${body}</body></html>`);
}

async function readForm(req) {
  let data = "";
  for await (const chunk of req) {
    data += chunk;
  }
  return new URLSearchParams(data);
}

async function interaction(req, res, uid, action) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (action === "abort") {
    return provider.interactionFinished(
      req,
      res,
      { error: "access_denied", error_description: "The user refused to share their identity" },
      { mergeWithLastSubmission: false },
    );
  }
  if (prompt.name === "login") {
    if (req.method === "POST") {
      const login = (await readForm(req)).get("login") || "";
      if (accounts[login]) {
        return provider.interactionFinished(
          req,
          res,
          { login: { accountId: login } },
          { mergeWithLastSubmission: false },
        );
      }
      return page(res, `<p id="idp-error">No account ${escape(login)}.</p>`);
    }
    return page(
      res,
      `<form method="post" action="/interaction/${uid}">
  <label>Account <input name="login" id="idp-login" autofocus></label>
  <button type="submit" id="idp-submit">Sign in</button>
</form>
<p><a href="/interaction/${uid}/abort" id="idp-refuse">Refuse</a></p>`,
    );
  }
  // Consent: granted at once, for what the client asked.
  const grant = new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (prompt.details.missingOIDCScope) {
    grant.addOIDCScope(prompt.details.missingOIDCScope.join(" "));
  }
  if (prompt.details.missingOIDCClaims) {
    grant.addOIDCClaims(prompt.details.missingOIDCClaims);
  }
  const grantId = await grant.save();
  return provider.interactionFinished(
    req,
    res,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
}

const handler = provider.callback();
const server = http.createServer((req, res) => {
  const match = /^\/interaction\/([^/?]+)(?:\/(abort))?/.exec(req.url);
  if (!match) {
    return handler(req, res);
  }
  interaction(req, res, match[1], match[2]).catch((err) => {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(String(err && err.stack ? err.stack : err));
  });
  return undefined;
});
server.listen(port, "127.0.0.1", () => {
  console.log(`oidc-provider ready at ${issuer}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
