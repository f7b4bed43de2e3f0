// The whole contract in one include.
#pragma once

#include "quiesce/core/backend.h"
#include "quiesce/core/command.h"
#include "quiesce/core/digest.h"
#include "quiesce/core/env.h"
#include "quiesce/core/handles.h"
#include "quiesce/core/outcome.h"
#include "quiesce/core/permit.h"
#include "quiesce/core/prng.h"
#include "quiesce/core/result.h"
#include "quiesce/core/transaction.h"
#include "quiesce/core/types.h"
