"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { ErrorAlert, Field, Loading } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";

/**
 * Pairing a channel's number: the live QR code (the gateway rotates it; this screen polls every 5 s) or
 * a pairing code for a phone number, shown with its expiry (WhatsApp keeps a code about 60 s). Asking
 * for a code restarts the gateway's session (a code only comes from a closed session), so it is a
 * button, never a poll; the gateway answers before WhatsApp gave the code, so the screen says it is being
 * made until the poll brings it. When no session is live — logged out, or the gateway gave up after too many
 * unread QR codes — "Gerar novamente" starts one. The simulator pairs by itself, so it only shows the status.
 */
export function PairingPanel({ id, status }: { id: string; status: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [phone, setPhone] = useState("");
  const pairing = useQuery(trpc.channels.pairing.queryOptions({ id_channel: id }, { refetchInterval: status === "connected" ? false : 5000 }));
  const request = useMutation(
    trpc.channels.requestPairing.mutationOptions({
      onSuccess: (data) => queryClient.setQueryData(trpc.channels.pairing.queryKey({ id_channel: id }), data),
    }),
  );
  const now = useNow(1000);

  function askCode(e: FormEvent) {
    e.preventDefault();
    const digits = phone.replace(/\D/g, "");
    if (digits) request.mutate({ id_channel: id, phone_number: digits });
  }

  if (pairing.isPending) return <Loading label="Buscando o código de pareamento…" />;
  if (pairing.error) return <ErrorAlert error={pairing.error} />;
  const p = pairing.data;
  if (p.status === "connected") return null;
  if (p.automatic) {
    return (
      <section className="card" aria-label="Pareamento">
        <h2>Pareamento</h2>
        <p>
          Este canal usa o <strong>simulador</strong>: ele pareia sozinho em instantes, sem celular. Status atual:{" "}
          <strong>{p.status === "connecting" ? "conectando" : "desconectado"}</strong>.
        </p>
      </section>
    );
  }
  const secondsLeft = p.pairing_code_expires_at ? Math.max(0, Math.ceil((Date.parse(p.pairing_code_expires_at) - now) / 1000)) : 0;
  return (
    <section className="card" aria-label="Pareamento">
      <h2>Conectar o número</h2>
      {p.session_closed ? (
        <div className="stack">
          <p>
            {p.status === "disconnected"
              ? "Não há pareamento em andamento: o número saiu ou o gateway desistiu depois de muitos QR codes sem leitura."
              : "Não há pareamento em andamento neste canal."}
          </p>
          <button type="button" className="btn btn-primary" disabled={request.isPending} onClick={() => request.mutate({ id_channel: id })}>
            Gerar novamente
          </button>
        </div>
      ) : (
        <div className="row">
          <div className="stack">
            <p>
              No celular, abra o WhatsApp › <strong>Aparelhos conectados</strong> › <strong>Conectar aparelho</strong> e escaneie o código abaixo. Ele se renova
              sozinho; esta tela atualiza quando o canal conectar.
            </p>
            {p.qr_code ? (
              // The gateway gives a data URL; next/image adds nothing for it.
              // eslint-disable-next-line @next/next/no-img-element
              <img src={p.qr_code} alt="QR code de pareamento" width={264} height={264} />
            ) : (
              <p className="muted">O QR code ainda não chegou do gateway. Aguarde alguns segundos.</p>
            )}
          </div>
          <div className="stack">
            {p.pairing_code && secondsLeft > 0 ? (
              <p>
                Digite no celular (WhatsApp › Aparelhos conectados › Conectar com número de telefone):{" "}
                <strong className="mono" title="Código de pareamento">
                  {p.pairing_code.replace(/^(.{4})(.{4})$/, "$1-$2")}
                </strong>{" "}
                <span className="muted small" data-testid="pairing-code-expiry">
                  (vale por mais {secondsLeft} s)
                </span>
              </p>
            ) : p.pairing_code ? (
              <p className="muted">O código de pareamento expirou. Gere outro abaixo.</p>
            ) : p.pairing_code_pending ? (
              <p className="muted" data-testid="pairing-code-pending">
                O WhatsApp está gerando o código de pareamento. Ele aparece aqui em alguns segundos.
              </p>
            ) : null}
          </div>
        </div>
      )}
      <form className="stack" onSubmit={askCode}>
        <p>Ou conecte com um código, sem escanear (o QR code atual deixa de valer):</p>
        <Field label="Número com DDI e DDD" hint="Somente dígitos, por exemplo 5511999998888.">
          {(control) => <input {...control} inputMode="numeric" value={phone} onChange={(e) => setPhone(e.target.value)} placeholder="5511999998888" />}
        </Field>
        <button type="submit" className="btn" disabled={request.isPending}>
          {p.pairing_code ? "Gerar novamente" : "Gerar código de pareamento"}
        </button>
        {request.isPending && <Loading label="Pedindo o código ao gateway…" />}
        {request.error && <ErrorAlert error={request.error} />}
      </form>
    </section>
  );
}

/** The current time, updated every `ms` (for countdowns). */
function useNow(ms: number) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function DisconnectButton({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const disconnect = useMutation(
    trpc.channels.disconnect.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries({ queryKey: trpc.channels.list.queryKey() }),
          queryClient.invalidateQueries({ queryKey: trpc.channels.info.queryKey({ id_channel: id }) }),
        ]),
    }),
  );
  return (
    <>
      <button
        type="button"
        className="btn btn-ghost-danger"
        disabled={disconnect.isPending}
        onClick={() => {
          if (window.confirm("Desconectar este número? Campanhas em andamento neste canal ficam pausadas até conectar de novo."))
            disconnect.mutate({ id_channel: id });
        }}
      >
        Desconectar
      </button>
      {disconnect.error && <ErrorAlert error={disconnect.error} />}
    </>
  );
}
