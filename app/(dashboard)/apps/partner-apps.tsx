"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { SigningSecret } from "../../_components/signing-secret";
import { CopyButton, EmptyState, ErrorAlert, Loading, PageHeader, QueryTable } from "../../_components/ui";
import { formatDateTime } from "../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../_lib/trpc";
import { nameMaxLength } from "../../../server/text-limits";

type App = RouterOutputs["partnerApps"]["list"][number];

/** A secret shown once: after registering a confidential app, or after rotating its secret. */
function SecretOnce({ title, clientId, secret, onClose }: { title: string; clientId: string; secret: string | null; onClose: () => void }) {
  return (
    <section className="card card-highlight" aria-labelledby="app-secret-title">
      <h2 id="app-secret-title">{title}</h2>
      <div className="field">
        <label htmlFor="new-client-id">client_id</label>
        <div className="row">
          <input id="new-client-id" className="mono grow" readOnly value={clientId} />
          <CopyButton text={clientId} label="Copiar client_id" />
        </div>
      </div>
      {secret && (
        <>
          <p className="alert alert-warning" role="note">
            Copie o client_secret agora: por segurança ele não será mostrado novamente.
          </p>
          <div className="field">
            <label htmlFor="new-client-secret">client_secret</label>
            <div className="row">
              <input id="new-client-secret" className="mono grow" readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
              <CopyButton text={secret} label="Copiar client_secret" />
            </div>
          </div>
        </>
      )}
      <button type="button" className="btn btn-ghost" onClick={onClose}>
        Já copiei, fechar
      </button>
    </section>
  );
}

export function PartnerApps() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const apps = useQuery(trpc.partnerApps.list.queryOptions());
  const scopes = useQuery(trpc.partnerApps.scopes.queryOptions());
  const [shown, setShown] = useState<{ title: string; clientId: string; secret: string | null }>();
  const register = useMutation(
    trpc.partnerApps.register.mutationOptions({
      onSuccess: (r) => {
        setShown({ title: `App “${r.app.name}” registrado`, clientId: r.app.client_id, secret: r.client_secret });
        void queryClient.invalidateQueries(trpc.partnerApps.list.queryFilter());
      },
    }),
  );

  function onRegister(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const data = new FormData(form);
    const text = (k: string) => String(data.get(k) ?? "").trim();
    register.mutate(
      {
        name: text("name"),
        logo_url: text("logo_url"),
        homepage_url: text("homepage_url"),
        privacy_url: text("privacy_url"),
        webhook_url: text("webhook_url"),
        redirect_uris: text("redirect_uris").split(/\s+/).filter(Boolean),
        scopes: data.getAll("scopes").map(String) as ("statistics:read" | "campaigns:read" | "settings:read")[],
        client_type: text("client_type") === "public" ? "public" : "confidential",
      },
      { onSuccess: () => form.reset() },
    );
  }

  return (
    <>
      <PageHeader
        title="Apps"
        description={
          <>
            Registre apps de parceiros que acessam dados agregados das contas que os autorizarem (OAuth 2.0 com PKCE). Metadados em{" "}
            <a href="/.well-known/oauth-authorization-server">/.well-known/oauth-authorization-server</a>.
          </>
        }
      />

      {shown && <SecretOnce {...shown} onClose={() => setShown(undefined)} />}

      <section className="card">
        <h2>Registrar um app</h2>
        <form className="stack" onSubmit={onRegister}>
          <label className="field">
            <span>Nome do app</span>
            <input name="name" required maxLength={nameMaxLength} placeholder="Ex.: Painel de BI" />
          </label>
          <div className="row">
            <label className="field grow">
              <span>URL do logo</span>
              <input name="logo_url" type="url" placeholder="https://…/logo.png" />
            </label>
            <label className="field grow">
              <span>Página do app</span>
              <input name="homepage_url" type="url" placeholder="https://…" />
            </label>
          </div>
          <div className="row">
            <label className="field grow">
              <span>Política de privacidade</span>
              <input name="privacy_url" type="url" placeholder="https://…/privacidade" />
            </label>
            <label className="field grow">
              <span>Webhook do app</span>
              <input name="webhook_url" type="url" placeholder="https://…/webhook" />
            </label>
          </div>
          <label className="field">
            <span>URIs de redirecionamento (uma por linha)</span>
            <textarea name="redirect_uris" required rows={2} placeholder="https://app.example.com/callback" />
            <small>https, ou http apenas para 127.0.0.1, [::1] ou localhost. A URI do pedido deve ser idêntica.</small>
          </label>
          <fieldset className="field">
            <legend>Escopos pedidos</legend>
            {scopes.isPending && <Loading />}
            <ErrorAlert error={scopes.error} />
            {scopes.data?.map((s) => (
              <label key={s.scope} className="check">
                <input type="checkbox" name="scopes" value={s.scope} defaultChecked={s.scope === "statistics:read"} />
                <span>
                  <code>{s.scope}</code> — {s.description}
                  {!s.autoApproved && <small> (precisa de aprovação do operador)</small>}
                </span>
              </label>
            ))}
          </fieldset>
          <fieldset className="field">
            <legend>Tipo de cliente</legend>
            <label className="check">
              <input type="radio" name="client_type" value="confidential" defaultChecked />
              <span>Confidencial (servidor; recebe um client_secret)</span>
            </label>
            <label className="check">
              <input type="radio" name="client_type" value="public" />
              <span>Público (app móvel ou SPA; só PKCE, sem segredo)</span>
            </label>
          </fieldset>
          <div>
            {/* Until the scopes are listed the form has no checkbox to send: a quick click would ask for none. */}
            <button className="btn btn-primary" type="submit" disabled={register.isPending || !scopes.data}>
              {register.isPending ? "Registrando…" : "Registrar app"}
            </button>
          </div>
          <ErrorAlert error={register.error} />
        </form>
      </section>

      <section className="card">
        <h2>Seus apps</h2>
        {apps.isPending ? (
          <Loading />
        ) : apps.error ? (
          <ErrorAlert error={apps.error} />
        ) : apps.data.length === 0 ? (
          <EmptyState>Nenhum app registrado ainda.</EmptyState>
        ) : (
          <div className="stack">
            {apps.data.map((a) => (
              <AppCard
                key={a.client_id}
                app={a}
                onSecret={(secret) => setShown({ title: `Novo client_secret de “${a.name}”`, clientId: a.client_id, secret })}
              />
            ))}
          </div>
        )}
      </section>

      <AuthorizedApps />
    </>
  );
}

function AppCard({ app: a, onSecret }: { app: App; onSecret: (secret: string) => void }) {
  const trpc = useTRPC();
  const rotate = useMutation(trpc.partnerApps.rotateSecret.mutationOptions({ onSuccess: (r) => onSecret(r.client_secret) }));
  const pending = a.requested_scopes.filter((s) => !a.approved_scopes.includes(s));
  return (
    <article className="card" aria-label={`App ${a.name}`}>
      <h3>{a.name}</h3>
      <dl>
        <dt>client_id</dt>
        <dd>
          <code>{a.client_id}</code>
        </dd>
        <dt>Tipo</dt>
        <dd>{a.client_type === "public" ? "Público (PKCE)" : "Confidencial"}</dd>
        <dt>URIs de redirecionamento</dt>
        <dd>
          {a.redirect_uris.map((u) => (
            <code key={u} className="mono">
              {u}{" "}
            </code>
          ))}
        </dd>
        <dt>Escopos aprovados</dt>
        <dd>{a.approved_scopes.length ? a.approved_scopes.map((s) => <code key={s}>{s} </code>) : "nenhum"}</dd>
        {pending.length > 0 && (
          <>
            <dt>Aguardando aprovação</dt>
            <dd>
              <span className="badge badge-pending">{pending.join(" ")}</span>
            </dd>
          </>
        )}
        <dt>Webhook do app</dt>
        <dd>
          {a.webhook_url ? <code>{a.webhook_url}</code> : "não configurado"}
          <br />
          <small className="muted">
            Recebe <code>campaign_status</code> e <code>campaign_progress</code> das contas que autorizaram o app com <code>campaigns:read</code>; o campo{" "}
            <code>sub</code> diz de qual conta é o evento.
          </small>
        </dd>
        <dt>Registrado em</dt>
        <dd>{formatDateTime(a.created_at)}</dd>
      </dl>
      {a.client_type === "confidential" && (
        <div className="row">
          <button type="button" className="btn btn-ghost" disabled={rotate.isPending} onClick={() => rotate.mutate({ client_id: a.client_id })}>
            Gerar novo client_secret
          </button>
          {a.secret_rotated_at && <small className="muted">Último em {formatDateTime(a.secret_rotated_at)}</small>}
        </div>
      )}
      <ErrorAlert error={rotate.error} />
      {a.webhook_url && <AppWebhookSecret app={a} />}
    </article>
  );
}

/** The app's webhook signing secret, for verifying what its webhook URL receives. */
function AppWebhookSecret({ app: a }: { app: App }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const secret = useQuery(trpc.partnerApps.webhookSecret.queryOptions({ client_id: a.client_id }));
  const rotate = useMutation(
    trpc.partnerApps.rotateWebhookSecret.mutationOptions({
      onSuccess: () => void queryClient.invalidateQueries(trpc.partnerApps.webhookSecret.queryFilter({ client_id: a.client_id })),
    }),
  );
  if (secret.error) return <ErrorAlert error={secret.error} />;
  if (!secret.data) return null;
  return (
    <div className="stack">
      <h4>Segredo de assinatura do webhook</h4>
      <SigningSecret
        label={`Segredo de assinatura do webhook de ${a.name}`}
        secret={secret.data.signing_secret}
        rotate={() => rotate.mutateAsync({ client_id: a.client_id })}
      />
    </div>
  );
}

/** Apps this account authorized (as an end user), with "revoke access". */
function AuthorizedApps() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const authorized = useQuery(trpc.partnerApps.authorized.queryOptions());
  const revoke = useMutation(
    trpc.partnerApps.revokeAccess.mutationOptions({ onSuccess: () => void queryClient.invalidateQueries(trpc.partnerApps.authorized.queryFilter()) }),
  );
  return (
    <section className="card">
      <h2>Apps autorizados</h2>
      <p className="muted">Apps de parceiros que você autorizou a ler dados desta conta.</p>
      <QueryTable query={authorized} empty="Nenhum app autorizado." columns={["App", "Escopos", "Autorizado em", null]}>
        {(rows) =>
          rows.map((a) => (
            <tr key={a.client_id}>
              <td>{a.homepage_url ? <a href={a.homepage_url}>{a.name}</a> : a.name}</td>
              <td>{a.scopes.join(" ")}</td>
              <td>{formatDateTime(a.authorized_at)}</td>
              <td className="actions">
                <button
                  type="button"
                  className="btn btn-ghost-danger"
                  disabled={revoke.isPending}
                  onClick={() => revoke.mutate({ client_id: a.client_id })}
                  aria-label={`Revogar acesso de ${a.name}`}
                >
                  Revogar acesso
                </button>
              </td>
            </tr>
          ))
        }
      </QueryTable>
      <ErrorAlert error={revoke.error} />
    </section>
  );
}
