"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorAlert, Field, Loading } from "../../../_components/ui";
import { useTRPC } from "../../../_lib/trpc";

/**
 * Pairing a channel's number: the live QR code (refreshed while the gateway rotates it) or a pairing
 * code for a phone number. The simulator pairs by itself, so it only shows the status.
 */
export function PairingPanel({ id, status }: { id: string; status: string }) {
  const trpc = useTRPC();
  const [phone, setPhone] = useState("");
  const [asked, setAsked] = useState<string | undefined>(undefined);
  const pairing = useQuery(
    trpc.channels.pairing.queryOptions({ id_channel: id, phone_number: asked }, { refetchInterval: status === "connected" ? false : 5000 }),
  );

  function askCode(e: FormEvent) {
    e.preventDefault();
    setAsked(phone.replace(/\D/g, "") || undefined);
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
  return (
    <section className="card" aria-label="Pareamento">
      <h2>Conectar o número</h2>
      <div className="row">
        <div className="stack">
          <p>
            No celular, abra o WhatsApp › <strong>Aparelhos conectados</strong> › <strong>Conectar aparelho</strong> e escaneie o
            código abaixo. Ele se renova sozinho; esta tela atualiza quando o canal conectar.
          </p>
          {p.qr_code ? (
            // The gateway gives a data URL; next/image adds nothing for it.
            // eslint-disable-next-line @next/next/no-img-element
            <img src={p.qr_code} alt="QR code de pareamento" width={264} height={264} />
          ) : (
            <p className="muted">O QR code ainda não chegou do gateway. Aguarde alguns segundos.</p>
          )}
        </div>
        <form className="stack" onSubmit={askCode}>
          <p>Ou conecte com um código, sem escanear:</p>
          <Field label="Número com DDI e DDD" hint="Somente dígitos, por exemplo 5511999998888.">
            {(control) => <input {...control} inputMode="numeric" value={phone} onChange={(e) => setPhone(e.target.value)} placeholder="5511999998888" />}
          </Field>
          <button type="submit" className="btn">
            Gerar código de pareamento
          </button>
          {p.pairing_code && (
            <p>
              Digite no celular (WhatsApp › Aparelhos conectados › Conectar com número de telefone):{" "}
              <strong className="mono" aria-label="Código de pareamento">
                {p.pairing_code.replace(/^(.{4})(.{4})$/, "$1-$2")}
              </strong>
            </p>
          )}
        </form>
      </div>
    </section>
  );
}

export function DisconnectButton({ id }: { id: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const disconnect = useMutation(
    trpc.channels.disconnect.mutationOptions({ onSuccess: () => queryClient.invalidateQueries({ queryKey: trpc.channels.list.queryKey() }) }),
  );
  return (
    <>
      <button
        type="button"
        className="btn btn-ghost-danger"
        disabled={disconnect.isPending}
        onClick={() => {
          if (window.confirm("Desconectar este número? Campanhas em andamento neste canal ficam pausadas até conectar de novo.")) disconnect.mutate({ id_channel: id });
        }}
      >
        Desconectar
      </button>
      {disconnect.error && <ErrorAlert error={disconnect.error} />}
    </>
  );
}
