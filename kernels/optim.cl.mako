## One optimizer update per element, in place: param, grad and the optimizer's state are read
## once and written once, where the per-op path runs about ten elementwise kernels per parameter.
## The formulas and argument order are declared in clgrad/backend/base.py (OPTIMIZERS); the
## NumPy reference is HostBackend.optimizer_step.
##
##   kind: "sgd", "adam" or "rmsprop"; flags: the switches on (each set is its own kernel)
##   buffers: (name, storage C type) of param, grad and the states present, in order
##   scalars: the names of the scalar arguments, in order (all of the compute type ct)
##   ct: the compute type (float; double for float64 params); index_t: int or long
##   grid_stride: loop over n with as many work-items as fill a GPU (as elementwise; one tensor)
##   tensors: how many parameters one launch updates (PyTorch's foreach): their ranges, each
##     padded to whole work-groups, follow one another; n_t its size, groups_end_t where its
##     groups end
// Each op rounds its result as PyTorch does, fused or not: no multiply-add contraction across
// an op's expression (GPU compilers contract whatever they see by default, so a fused chain
// would round differently from the same ops run one by one).
#pragma OPENCL FP_CONTRACT OFF
<%
I = index_t
types = dict(buffers)
bits = "long" if ct == "double" else "int"  # the integer type of a ct's bits
def load(name):
    return h.load(types[name], ct, name, name + "_i")
def store(name, val):
    return h.store(types[name], False, name, name + "_i", val) + ";"
%>
__kernel void cg_optim_${kind}(
% for t in range(tensors):
  % for name, st in buffers:
    __global ${"const " if name == "grad" else ""}${st} *${name}_${t}, const ${I} ${name}_off_${t},
  % endfor
    const ${I} n_${t}, const ${I} groups_end_${t},
% endfor
% for s in scalars:
    const ${ct} ${s}${"," if not loop.last else ")"}
% endfor
{
% if tensors == 1 and grid_stride:
  for (${I} _i = get_global_id(0); _i < n_0; _i += get_global_size(0)) {
  % for name, st in buffers:
    __global ${"const " if name == "grad" else ""}${st} *${name} = ${name}_0;
    const ${I} ${name}_i = ${name}_off_0 + _i;
  % endfor
${update(load, store, I)}
  }
% else:
  // Each work-group lies in one tensor's range (padded to whole groups). Its tensor's pointers,
  // offsets and size are chosen by selects on the group's id, values the same for every item
  // of the group: the group's loop keeps one block, which a CPU device vectorizes (a branch per
  // tensor around the loads and stores ran 4 tensors 7x slower on PoCL than one by one).
  const ${I} _group = (${I})get_group_id(0);
  % for name, st in buffers:
  __global ${"const " if name == "grad" else ""}${st} *${name} = ${name}_0;
  ${I} ${name}_o = ${name}_off_0;
  % endfor
  ${I} _n = n_0, _first = 0;
  % for t in range(1, tensors):
  {
    const bool past = _group >= groups_end_${t - 1};
    % for name, st in buffers:
    ${name} = past ? ${name}_${t} : ${name};
    ${name}_o = past ? ${name}_off_${t} : ${name}_o;
    % endfor
    _n = past ? n_${t} : _n;
    _first = past ? groups_end_${t - 1} : _first;
  }
  % endfor
  const ${I} _i = (_group - _first) * (${I})get_local_size(0) + (${I})get_local_id(0);
  if ((_group - _first + 1) * (${I})get_local_size(0) <= _n || _i < _n) {
  % for name, st in buffers:
    const ${I} ${name}_i = ${name}_o + _i;
  % endfor
${update(load, store, I)}
  }
% endif
}

<%def name="update(load, store, I)">
    ${ct} p = ${load("param")};
    ${ct} d = ${load("grad")};
% if "maximize" in flags:
    d = -d;
% endif
% if "weight_decay" in flags:
  % if "decoupled" in flags:
    p = p * decay;
  % else:
    d = d + p * weight_decay;
  % endif
% endif
% if kind == "sgd":
  % if "momentum" in flags:
    // On the first step the buffer is new (uninitialised): it becomes d. The choice is made
    // on the bits: PoCL turns `first ? d : load(...)` into a branch around the load, and its
    // work-group loop then runs one item at a time (3.7x slower over 2M floats).
    const ${ct} kept = ${load("momentum_buffer")} * momentum + d * dampening1;
    const ${bits} first_mask = -(${bits})(first != (${ct})0);
    const ${ct} buf = as_${ct}((as_${bits}(d) & first_mask) | (as_${bits}(kept) & ~first_mask));
    ${store("momentum_buffer", "buf")}
    % if "nesterov" in flags:
    d = d + buf * momentum;
    % else:
    d = buf;
    % endif
  % endif
    ${store("param", "p + d * neg_lr")}
% elif kind == "adam":
    const ${ct} m = ${load("exp_avg")} * beta1 + d * one_minus_beta1;
    ${ct} v = ${load("exp_avg_sq")} * beta2 + d * d * one_minus_beta2;
    ${store("exp_avg", "m")}
    ${store("exp_avg_sq", "v")}
  % if "amsgrad" in flags:
    {
      // maximum() as the per-op path has it: NaN propagates
      const ${ct} old = ${load("max_exp_avg_sq")};
      v = (old != old || old > v) ? old : v;
      ${store("max_exp_avg_sq", "v")}
    }
  % endif
    ${store("param", f"p - m / (cg_sqrt_{ct}(v) / bias2_sqrt + eps) * step_size")}
% else:
    const ${ct} sq = ${load("square_avg")} * alpha + d * d * one_minus_alpha;
    ${store("square_avg", "sq")}
  % if "centered" in flags:
    const ${ct} ga = ${load("grad_avg")} * alpha + d * one_minus_alpha;
    ${store("grad_avg", "ga")}
    const ${ct} avg = cg_sqrt_${ct}(sq - ga * ga) + eps;
  % else:
    const ${ct} avg = cg_sqrt_${ct}(sq) + eps;
  % endif
  % if "momentum" in flags:
    const ${ct} buf = ${load("momentum_buffer")} * momentum + d / avg;
    ${store("momentum_buffer", "buf")}
    ${store("param", "p + buf * neg_lr")}
  % else:
    ${store("param", "p + d / avg * neg_lr")}
  % endif
% endif
</%def>
