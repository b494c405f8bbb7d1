//! The resolver handed to ureq: it resolves a name, checks every address
//! against the policy, and returns only checked addresses, which ureq then
//! connects to: no second lookup, so no DNS-rebinding gap.
