"use client";

import { useState } from "react";
import { formatDayTimeSeconds } from "../_lib/format";
import { CopyButton, ErrorAlert } from "./ui";

/**
 * A webhook signing secret, masked until "Mostrar", with a confirmed rotation (the previous secret keeps
 * signing beside the new one until `previous_valid_until`). The account's webhooks and each partner app's.
 */
export function SigningSecret({ label, secret, rotate }: { label: string; secret: string; rotate: () => Promise<{ previous_valid_until: string }> }) {
  const [revealed, setRevealed] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [pending, setPending] = useState(false);
  const [rotated, setRotated] = useState<{ previous_valid_until: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setPending(true);
    setError(null);
    try {
      setRotated(await rotate());
      setConfirming(false);
      setRevealed(true);
    } catch (err) {
      setError(err);
    } finally {
      setPending(false);
    }
  };
  return (
    <>
      <div className="row">
        <input aria-label={label} className="mono grow" readOnly value={revealed ? secret : `whsec_${"•".repeat(32)}`} />
        <button type="button" className="btn" onClick={() => setRevealed((r) => !r)}>
          {revealed ? "Ocultar" : "Mostrar"}
        </button>
        {revealed && <CopyButton text={secret} label="Copiar segredo" />}
      </div>
      {rotated && (
        <p className="alert alert-success" role="status">
          Novo segredo criado. O anterior continua assinando junto até {formatDayTimeSeconds(rotated.previous_valid_until)}.
        </p>
      )}
      {confirming ? (
        <div className="row">
          <span>Gerar um novo segredo? O atual continua válido por 24 horas (os envios levam as duas assinaturas).</span>
          <button type="button" className="btn btn-danger" disabled={pending} onClick={() => void confirm()}>
            Confirmar troca
          </button>
          <button type="button" className="btn btn-ghost" onClick={() => setConfirming(false)}>
            Cancelar
          </button>
        </div>
      ) : (
        <div className="row">
          <button type="button" className="btn" onClick={() => setConfirming(true)}>
            Trocar segredo
          </button>
        </div>
      )}
      <ErrorAlert error={error} />
    </>
  );
}
