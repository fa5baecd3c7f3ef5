"use client";

import QRCode from "qrcode";
import { useEffect, useState } from "react";
import { CopyButton } from "../../../_components/ui";

/** The public join link: copy it, or download its QR code for posts and slides. */
export function JoinLink({ url, slug }: { url: string; slug: string }) {
  const [qr, setQr] = useState<string>();
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(url, { width: 480, margin: 2, errorCorrectionLevel: "M" }).then(
      (data) => live && setQr(data),
      () => live && setQr(undefined),
    );
    return () => {
      live = false;
    };
  }, [url]);
  return (
    <div className="join-link">
      <div className="stack grow">
        <label className="field">
          <span>Link de entrada</span>
          <input readOnly value={url} onFocus={(e) => e.currentTarget.select()} data-testid="join-url" />
        </label>
        <div className="row wrap">
          <CopyButton text={url} label="Copiar link" />
          <a className="btn btn-ghost" href={url} target="_blank" rel="noreferrer">
            Abrir link
          </a>
          {qr && (
            <a className="btn btn-ghost" href={qr} download={`qr-${slug}.png`}>
              Baixar QR code
            </a>
          )}
        </div>
        <p className="muted small">
          Use este link nos anúncios, posts e na bio: cada pessoa cai no grupo que ainda tem vaga. Para saber de onde vieram os cliques, acrescente{" "}
          <code>?utm_source=instagram</code> (e <code>utm_medium</code>, <code>utm_campaign</code>).
        </p>
      </div>
      <div className="qr-box">
        {qr ? <img src={qr} alt={`QR code do link ${url}`} width={160} height={160} /> : <span className="muted small">Gerando QR code…</span>}
      </div>
    </div>
  );
}
