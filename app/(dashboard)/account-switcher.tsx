"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";

/** The account switcher (docs/team.md#several-accounts): shown only to a person in more than one account. */
export function AccountSwitcher() {
  const trpc = useTRPC();
  const accounts = useQuery(trpc.members.myAccounts.queryOptions());
  const switchAccount = useMutation(trpc.members.switchAccount.mutationOptions({ onSuccess: () => window.location.assign("/overview") }));
  if (!accounts.data || accounts.data.length < 2) return null;
  const current = accounts.data.find((a) => a.current);
  return (
    <label className="field account-switcher">
      <span>Conta</span>
      <select
        aria-label="Trocar de conta"
        value={current?.tenantId}
        disabled={switchAccount.isPending}
        onChange={(e) => switchAccount.mutate({ tenantId: e.target.value })}
      >
        {accounts.data.map((a) => (
          <option key={a.tenantId} value={a.tenantId}>
            {a.name}
          </option>
        ))}
      </select>
    </label>
  );
}
